"""The recogniser that learns the deck it is shown, on a real card design it was not made for: the French-pattern
SVG-cards deck (fixtures/decks/svg-cards), composited into photo-like frames (hardware/camera/devset.py).

Calibrated on one seed's renders on a wooden table; read on frames of other seeds, backgrounds and light. The glyph
recogniser cannot calibrate on this deck at all (its index reader assumes a layout): the learned one must, and must
never name a wrong card — where it cannot tell, it says unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from hardware.camera import recognizer
from hardware.camera.devset import PHONE, background, calibration_set, card_quad, lay, load_deck, scenes, score
from hardware.camera.learned import DeckModel, DeckReader, learn, load_reader
from hardware.camera.recognizer import CalibrationError, RecognitionError
from services.cli import main

pytestmark = pytest.mark.xdist_group("deck-svg-cards")  # its module fixtures (a calibration) once, on one worker


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def faces() -> dict[str, Any]:
    return load_deck()


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def photos(faces: dict[str, Any]) -> dict[str, Any]:
    return calibration_set(faces, 1)


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def model(photos: dict[str, Any]) -> DeckModel:
    return learn(photos)


def test_the_glyph_recogniser_cannot_calibrate_on_this_deck(photos: dict[str, Any]) -> None:
    with pytest.raises(CalibrationError, match="the card's corner index could not be read"):
        recognizer.calibrate(photos)


def test_held_out_frames_are_read_with_no_wrong_card(model: DeckModel, faces: dict[str, Any]) -> None:
    tally = score(DeckReader(model).recognize, scenes(faces, 2000, 60))
    assert tally.cards >= 150
    assert tally.wrong == 0 and tally.hard_wrong == 0 and tally.phantom == 0, tally.confusions
    assert tally.right >= 0.94 * tally.cards, tally.as_dict()  # 99.2 % over 1,000 frames (bench/RESULTS.md)
    assert tally.missed <= 0.02 * tally.cards


def test_each_calibration_photo_reads_back_as_its_own_card(model: DeckModel, photos: dict[str, Any]) -> None:
    reader = DeckReader(model)
    read = {code: [d.card for d in reader.recognize(photo)] for code, photo in photos.items()}
    assert read == {code: [code] for code in photos}


def two_cards(faces: dict[str, Any]) -> Any:
    rng = np.random.default_rng(5)
    frame = background(rng, "wood", *PHONE)
    for code, centre in (("3S", (330.0, 800.0)), ("4S", (870.0, 800.0))):
        lay(frame, faces[code], card_quad(rng, faces[code], centre, 600, 0.02), (4, 4, 0.3))
    return np.clip(frame, 0, 255).astype(np.uint8)


def test_calibration_names_every_unusable_photo_at_once(photos: dict[str, Any], faces: dict[str, Any]) -> None:
    bad = dict(photos)
    del bad["4C"]
    bad["2H"] = cv2.GaussianBlur(photos["2H"], (0, 0), 20)
    bad["3S"] = two_cards(faces)
    bad["5D"] = np.full_like(photos["5D"], 90)
    bad["ZZ"] = photos["6D"]
    with pytest.raises(CalibrationError) as raised:
        learn(bad, {"2H": "2H.jpg", "3S": "3S.jpg", "5D": "5D.jpg", "ZZ": "ZZ.jpg"})
    found = {problem.photo: problem.why for problem in raised.value.problems}
    assert found.keys() == {"4C", "2H.jpg", "3S.jpg", "5D.jpg", "ZZ.jpg"}
    assert found["4C"] == "no photo of this card" and found["ZZ.jpg"] == "not a card code"
    assert found["2H.jpg"].startswith("too blurred") and found["5D.jpg"].startswith("no card found in the photo: ")
    assert found["3S.jpg"] == "2 cards found in the photo (one card per photo)"


def test_a_model_file_round_trips_and_a_bad_one_is_one_clear_error(model: DeckModel, tmp_path: Path) -> None:
    path = tmp_path / "deck.npz"
    model.save(path)
    loaded = DeckModel.load(path)
    assert (loaded.names == model.names).all() and np.allclose(loaded.index, model.index)
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "junk.npz").write_bytes(b"not a model at all")
    for name in ("empty.npz", "junk.npz"):
        with pytest.raises(RecognitionError, match=f"{name}: not a deck model"):
            DeckModel.load(tmp_path / name)
    with pytest.raises(RecognitionError, match="missing.npz: no such file"):
        DeckModel.load(tmp_path / "missing.npz")


def test_a_model_of_an_older_kind_asks_to_be_calibrated_again(model: DeckModel, tmp_path: Path) -> None:
    path = tmp_path / "old.npz"
    with path.open("wb") as file:  # the first kind: a coarser whole-face view, the same fields
        np.savez_compressed(file, format=np.array("studio-deck-model/1"), names=model.names, index=model.index,
                            whole=model.whole[:, :1120])  # fmt: skip
    for load in (DeckModel.load, load_reader):
        with pytest.raises(RecognitionError, match="old.npz: a deck model of an older kind .*calibrate again"):
            load(path)


def test_studio_cards_calibrates_on_the_real_deck_and_reads_a_table_frame(
    photos: dict[str, Any], faces: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deck = tmp_path / "deck"
    deck.mkdir()
    for code, photo in photos.items():
        cv2.imwrite(str(deck / f"{code}.jpg"), photo, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert main(["cards", "calibrate", str(deck), "--out", str(tmp_path / "deck.npz")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "method: learned", "the glyph reader cannot read this deck's index"
    summary = json.loads(out[-1])
    assert summary["method"] == "learned" and summary["weakest"]["margin"] > 0
    scene = next(s for s in scenes(faces, 3000, 20) if len(s.cards) >= 3 and not any(p.hard for p in s.cards))
    cv2.imwrite(str(tmp_path / "table.jpg"), scene.frame)
    assert main(["cards", "recognize", str(tmp_path / "table.jpg"), "--templates", str(tmp_path / "deck.npz")]) == 0
    found = [item["card"] for item in json.loads(capsys.readouterr().out)]
    truth = {p.code for p in scene.cards}
    assert set(found) - {None} <= truth, "no card that is not on the table"
    assert len(set(found) & truth) >= len(truth) - 1


def test_a_deck_that_is_not_there_or_lacks_a_face_is_refused_naming_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"nowhere: no such folder \(a deck is a folder of its 52 faces"):
        load_deck(tmp_path / "nowhere")
    with pytest.raises(ValueError, match=r"AS\.png: missing"):
        load_deck(tmp_path)
    cv2.imwrite(str(tmp_path / "AS.png"), np.zeros((10, 10, 3), np.uint8))  # a face with no transparency
    with pytest.raises(ValueError, match=r"AS\.png: not a card face with transparency"):
        load_deck(tmp_path)
