"""Calibration that coaches: a calibration photo with a bright or vignetted surround is handled where the card can be
told apart, and any photo that cannot be used is refused with one sentence saying what to change; a clean set's
cards are listed weakest first with their nearest look-alike (``studio cards calibrate``).

The bad photos are made from the synthetic deck's own calibration photos (``hardware.sim.camera``) with OpenCV: a
heavy white vignette, a pale table running up to one of the card's edges, the card shifted out of the frame, glare
over an index, blur, dim light, a far-away camera."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from hardware.camera import CalibrationError, calibrate, calibrate_dir, self_check
from hardware.camera.devset import glare
from hardware.camera.learned import calibration_face
from hardware.camera.margins import margin_table, weak_margin
from hardware.camera.quality import DIRECTIONS, locate
from hardware.camera.recognizer import CARD_H, CARD_W, _sides, find_cards
from hardware.sim.camera import calibration_photos
from services.cli import main

pytestmark = pytest.mark.xdist_group("deck-coaching")  # its module fixtures (a calibration) once, on one worker

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def photos() -> dict[str, Any]:
    return calibration_photos(0)


def card_of(photo: Any) -> Any:
    """The card's corners in a clean photo."""
    found, why = locate(photo, cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY))
    assert found is not None, why
    return found[0]


def why_not(photo: Any) -> tuple[str, str]:
    """Why each reader's calibration refuses the photo ("" where it takes it): the glyph reader's, the learned one's."""
    try:
        calibrate({"AS": photo}, {"AS": "AS.jpg"})
    except CalibrationError as error:
        glyphs = next((p.why for p in error.problems if p.photo == "AS.jpg"), "")
    _face, learned = calibration_face(photo)
    return glyphs, learned


def white_vignette(photo: Any, strength: float) -> Any:
    """A phone's heavy white vignette: the photo fades to white towards its corners."""
    height, width = photo.shape[:2]
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    fade = np.clip(strength * np.hypot(x / width - 0.5, y / height - 0.5) * math.sqrt(2), 0, 1)[..., None]
    return np.clip(photo * (1 - fade) + 255 * fade, 0, 255).astype(np.uint8)


def pale_beyond(photo: Any, quad: Any, side: int) -> tuple[Any, tuple[float, float]]:
    """The table beyond one side of the card painted as pale as the card (a white cloth running up to that edge), and
    that side's outward direction."""
    start, end = quad[side], quad[(side + 1) % 4]
    along = end - start
    normal = np.array([along[1], -along[0]]) / np.linalg.norm(along)
    if np.dot((start + end) / 2 - quad.mean(axis=0), normal) < 0:
        normal = -normal
    y, x = np.mgrid[0 : photo.shape[0], 0 : photo.shape[1]].astype(np.float32)
    pale = photo.copy()
    pale[(x - start[0]) * normal[0] + (y - start[1]) * normal[1] > 1] = 245
    return cv2.GaussianBlur(pale, (0, 0), 1.0), (float(normal[0]), float(normal[1]))


def over_the_index(quad: Any) -> tuple[float, float]:
    """Where the face's top-left index lies in the photo (the face as the readers flatten it)."""
    across, down = _sides(quad)
    corners = np.roll(quad, -1, axis=0) if across > down else quad
    flat = np.array([[0, 0], [CARD_W - 1, 0], [CARD_W - 1, CARD_H - 1], [0, CARD_H - 1]], np.float32)
    to_photo = cv2.getPerspectiveTransform(flat, corners.astype(np.float32))
    point = cv2.perspectiveTransform(np.array([[[0.13 * CARD_W, 0.14 * CARD_H]]], np.float32), to_photo)[0, 0]
    return float(point[0]), float(point[1])


def test_a_heavy_white_vignette_is_handled_and_the_deck_calibrates(photos: dict[str, Any]) -> None:
    """The first look (one threshold) finds no card in these (the vignette is as bright as the card); a second look,
    at brighter thresholds and leaving out what touches the photo's border, finds it, and each reads back right."""
    faded = {code: white_vignette(photos[code], 1.2) for code in ("AS", "7H", "2C", "QH", "9D")}
    assert not any(find_cards(photo, surround=False) for photo in faded.values()), "it should defeat one threshold"
    assert all(find_cards(photo) for photo in faded.values()), "a frame's look above the table's own light finds it"
    assert all(calibration_face(photo)[0] is not None for photo in faded.values())
    templates = calibrate({**photos, **faded})
    readings = self_check(templates, {**photos, **faded})
    assert {code: readings[code].card for code in faded} == {code: code for code in faded}


@pytest.mark.parametrize("side", [0, 1, 2, 3])
def test_a_card_melting_into_a_pale_surround_is_refused_naming_its_edge(photos: dict[str, Any], side: int) -> None:
    photo = photos["7H"]
    pale, outward = pale_beyond(photo, card_of(photo), side)
    for why in why_not(pale):
        said = re.fullmatch(
            r"the card's ([a-z-]+) edge does not stand out from the background: retake on a darker cloth", why
        )
        assert said, why
        named = DIRECTIONS.index(said.group(1)) * math.pi / 4
        off = abs((named - math.atan2(outward[1], outward[0]) + math.pi) % (2 * math.pi) - math.pi)
        assert off <= math.pi / 4 + 1e-6, f"{said.group(1)} for an edge facing {outward}"


def test_a_card_cut_by_the_frame_is_refused(photos: dict[str, Any]) -> None:
    photo = photos["KD"]
    quad = card_of(photo)
    shift = -float(quad[:, 0].min()) - 0.2 * float(np.ptp(quad[:, 0]))  # a fifth of the card off the left side
    moved = cv2.warpAffine(photo, np.float32([[1, 0, shift], [0, 1, 0]]), photo.shape[1::-1],
                           borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
    assert why_not(moved) == ("the card runs off the photo at its left edge: move the card fully into the frame",) * 2


@pytest.mark.parametrize("code", ["7H", "KD", "QH"])
def test_glare_over_an_index_is_refused(photos: dict[str, Any], code: str) -> None:
    lit = photos[code].astype(np.float32)
    glare(np.random.default_rng(0), lit, over_the_index(card_of(photos[code])), 40, 1.3)
    glared = np.clip(lit, 0, 255).astype(np.uint8)
    assert why_not(glared) == ("glare over the card's index corner: tilt the card or the light",) * 2


def test_blur_dim_light_and_a_far_camera_are_each_refused_with_what_to_change(photos: dict[str, Any]) -> None:
    photo = photos["5S"]
    for blurred in why_not(cv2.GaussianBlur(photo, (0, 0), 5)):
        assert re.fullmatch(r"too blurred \(edge blur .* px .*\): hold the camera still and focus on the card", blurred)
    for dim in why_not((photo * 0.2).astype(np.uint8)):
        assert re.fullmatch(r"too dark \(the card's paper at grey level \d+, at least 70\): light the table more", dim)
    for far in why_not(cv2.resize(photo, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)):
        assert re.fullmatch(r"the card is too small in the photo \(\d+ px across, at least 150\): move the camera "
                            r"closer", far)  # fmt: skip


def test_the_clean_photos_pass_every_check(photos: dict[str, Any]) -> None:
    assert {code: calibration_face(photo)[1] for code, photo in photos.items()} == {code: "" for code in photos}


def test_every_bad_photo_is_named_at_once_with_what_to_change(photos: dict[str, Any], tmp_path: Path) -> None:
    bad = {
        "7H": pale_beyond(photos["7H"], card_of(photos["7H"]), 0)[0],
        "5S": cv2.GaussianBlur(photos["5S"], (0, 0), 5),
        "KD": cv2.resize(photos["KD"], None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA),
    }
    for code in DECK:
        cv2.imwrite(str(tmp_path / f"{code}.png"), bad.get(code, photos[code]))
    with pytest.raises(CalibrationError) as raised:
        calibrate_dir(tmp_path)
    said = {problem.photo: problem.why for problem in raised.value.problems}
    assert sorted(said) == ["5S.png", "7H.png", "KD.png"]
    assert said["7H.png"].endswith("edge does not stand out from the background: retake on a darker cloth")
    assert said["5S.png"].endswith("hold the camera still and focus on the card")
    assert said["KD.png"].endswith("move the camera closer")


def test_the_margin_table_lists_every_card_weakest_first_with_its_look_alike(
    photos: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = margin_table(self_check(calibrate(photos), photos), weak_margin("glyphs"))
    assert sorted(row.card for row in table) == sorted(DECK)
    assert [row.margin for row in table] == sorted(row.margin for row in table)
    assert all(row.nearest not in (None, row.card) and row.weak == (row.margin < 0.048) for row in table)
    deck = tmp_path / "deck"
    deck.mkdir()
    for code, photo in photos.items():
        cv2.imwrite(str(deck / f"{code}.png"), photo)
    out = tmp_path / "t.npz"
    assert main(["cards", "calibrate", str(deck), "--out", str(out), "--method", "glyphs", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = summary["margins"]
    assert [row["card"] for row in rows] == [row.card for row in table] and out.exists()
    assert summary["weakest"] == {"card": rows[0]["card"], "nearest": rows[0]["nearest"], "margin": rows[0]["margin"]}
    assert summary["weak"] == [row["card"] for row in rows if row["weak"]] and summary["weak_margin"] == 0.048
    assert main(["cards", "calibrate", str(deck), "--out", str(out), "--method", "glyphs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["card", "read", "as", "confidence", "margin", "nearest", "look-alike"]
    printed = [line.split() for line in lines[2:-1]]
    assert [row[0] for row in printed] == [row.card for row in table]
    assert all(row[1] == row[0] and row[4] == table[i].nearest for i, row in enumerate(printed))
    assert [row[0] for row in printed if row[-1] == "weak"] == summary["weak"]
