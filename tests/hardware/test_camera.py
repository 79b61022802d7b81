"""The camera recogniser on synthetic frames it was not calibrated on, and confirmation over frames."""

from __future__ import annotations

import json
import random
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.camera import (
    CalibrationError,
    CameraReader,
    CardSeen,
    Confirmer,
    Detection,
    Recognizer,
    Templates,
    calibrate,
    calibrate_dir,
    self_check,
)
from hardware.sim.camera import FELTS, HEAVY, STYLES, Scene, SyntheticCamera, calibration_photos, render
from services.cli import main

pytestmark = pytest.mark.xdist_group("camera-glyphs")  # its module fixtures (a calibration) once, on one worker

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
UNSEEN_FELTS = [FELTS["blue"], FELTS["red"], FELTS["grey"]]  # calibration photos are on green
UNSEEN_STYLES = [STYLES["bold"], STYLES["light"]]  # calibration photos use the "calibration" glyphs


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def templates() -> Templates:
    return calibrate(calibration_photos())


def score(templates: Templates, scenes: list[Scene], seed: int) -> tuple[int, int, int, int]:
    """(cards shown, read correctly and confidently, confident wrong answers, unknown or missed).

    The frames are split between two worker processes (rendering 1280×720 frames is the slow part).
    """
    chunks = [(templates, scenes[half::2], seed * 2 + half) for half in (0, 1)]
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(_score_chunk, chunks))
    shown, right, wrong = (sum(r[i] for r in results) for i in range(3))
    return shown, right, wrong, shown - right - wrong


def _score_chunk(job: tuple[Templates, list[Scene], int]) -> tuple[int, int, int]:
    templates, scenes, seed = job
    recognizer = Recognizer(templates)
    rng = random.Random(seed)
    shown = right = wrong = 0
    for index, scene in enumerate(scenes):
        image, placed = render(rng.sample(DECK, rng.randint(1, 4)), scene, seed=seed * 100_000 + index)
        shown += len(placed)
        for detection in recognizer.recognize(image):
            centre = np.mean(detection.outline, axis=0)
            truth = min(placed, key=lambda p: float(np.linalg.norm(np.mean(p.quad, axis=0) - centre))).code
            if detection.card is not None:
                right += detection.card == truth
                wrong += detection.card != truth
    return shown, right, wrong


def test_moderate_frames_with_unseen_felt_light_and_glyphs_are_read_right_and_never_confidently_wrong(
    templates: Templates,
) -> None:
    rng = random.Random(1)
    scenes = [
        Scene(felt=rng.choice(UNSEEN_FELTS), style=rng.choice(UNSEEN_STYLES), light=(0.7, 1.15), blur=1.0, noise=6.0)
        for _ in range(300)  # about 750 cards (bench/camera.py reads thousands): make test stays in time
    ]
    shown, right, wrong, unknown = score(templates, scenes, seed=1)
    assert wrong == 0
    assert right / shown >= 0.995, f"{right} of {shown} read ({unknown} unknown or missed)"


@pytest.mark.parametrize(
    "degraded",
    [
        HEAVY,  # murky, tiny, tilted: nothing should be read
        Scene(blur=2.0, noise=12.0, light=(0.5, 0.9), card_width=(110, 160), tilt=0.1),  # soft and small
        Scene(blur=1.5, noise=10.0, light=(0.6, 1.0), card_width=(80, 110), tilt=0.1),  # too small to read
    ],
    ids=["heavy", "soft", "small"],
)
def test_degraded_frames_give_unknown_rather_than_a_wrong_card(templates: Templates, degraded: Scene) -> None:
    rng = random.Random(2)
    scenes = [
        Scene(**{**degraded.__dict__, "felt": rng.choice(list(FELTS.values())), "style": rng.choice(UNSEEN_STYLES)})
        for _ in range(80)
    ]
    _shown, right, wrong, unknown = score(templates, scenes, seed=2)
    assert wrong == 0
    assert unknown > 0  # the frames really are too poor to read every card
    if degraded is HEAVY:
        assert right == 0


def test_templates_survive_a_round_trip_through_a_file(templates: Templates, tmp_path: Path) -> None:
    templates.save(tmp_path / "t.npz")
    loaded = Templates.load(tmp_path / "t.npz")
    image, placed = render(["QH", "2C", "TS"], Scene(style=STYLES["bold"], felt=FELTS["blue"]), seed=5)
    assert sorted(d.card or "?" for d in Recognizer(loaded).recognize(image)) == sorted(p.code for p in placed)


def test_calibration_names_every_photo_it_cannot_use_at_once(tmp_path: Path) -> None:
    """Several bad photos in one folder: each is named with why, in one error (not the first only)."""
    photos = calibration_photos(seed=3)
    for code, photo in photos.items():
        if code not in ("QC", "KC"):
            cv2.imwrite(str(tmp_path / f"{code}.jpg"), photo)
    (tmp_path / "QC.png").write_bytes(b"not an image")  # unreadable: said once, not also as "no photo"
    table, _nothing = render([], Scene(felt=FELTS["green"]), seed=1)
    cv2.imwrite(str(tmp_path / "2H.jpg"), table)  # no card in it: only the table
    two = np.concatenate([photos["3S"], photos["4S"]], axis=1)
    cv2.imwrite(str(tmp_path / "3S.jpg"), two)  # two cards
    cv2.imwrite(str(tmp_path / "5D.jpg"), cv2.GaussianBlur(photos["5D"], (0, 0), 9))  # far too soft
    cv2.imwrite(str(tmp_path / "as.png"), photos["AS"])  # AS a second time
    (tmp_path / "notes.txt").write_text("deck bought in Bangkok")
    with pytest.raises(CalibrationError) as raised:
        calibrate_dir(tmp_path)
    said = {problem.photo: problem.why for problem in raised.value.problems}
    assert said.pop("KC") == "no photo of this card"
    assert said.pop("QC.png") == "not a readable image"
    assert said.pop("2H.jpg").startswith("no card found in the photo: photograph one card")
    assert said.pop("3S.jpg").startswith("2 cards found")
    assert said.pop("5D.jpg").startswith("too blurred")
    assert said.pop("as.png") == "a second photo of AS (also AS.jpg)"
    assert said.pop("notes.txt").startswith("not a photo")
    assert said == {}, said


def test_a_clean_calibration_reads_every_photo_back_with_its_margin(templates: Templates) -> None:
    readings = self_check(templates, calibration_photos())
    assert sorted(readings) == sorted(DECK)
    assert all(reading.card == code for code, reading in readings.items())
    assert all(reading.runner_up not in (None, code) and reading.margin > 0 for code, reading in readings.items())


def test_the_cli_calibrates_from_photos_and_prints_the_cards_it_sees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cards", "sim-deck", str(tmp_path / "deck")]) == 0
    (tmp_path / "deck" / "Thumbs.db").write_bytes(b"\0")
    (tmp_path / "deck" / "7H.png").write_bytes(b"")
    assert main(["cards", "calibrate", str(tmp_path / "deck"), "--out", str(tmp_path / "t.npz")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("2 problem(s) in " + str(tmp_path / "deck") + ":")
    assert sorted(line.strip() for line in err[1:]) == [
        "7H.png: not a readable image", "Thumbs.db: not a photo (.jpg, .jpeg, .png, .bmp, .webp)"
    ]  # fmt: skip
    assert not (tmp_path / "t.npz").exists(), "nothing is written from a set with problems"
    (tmp_path / "deck" / "Thumbs.db").unlink()
    main(["cards", "sim-deck", str(tmp_path / "deck")])  # 7H again
    capsys.readouterr()
    assert main(["cards", "calibrate", str(tmp_path / "deck"), "--out", str(tmp_path / "t.npz")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "method: glyphs", "the synthetic deck's plain index reads best by its glyphs"
    checked = {line.split()[0]: line.split() for line in out[2:-1]}
    assert sorted(checked) == sorted(DECK) and all(row[1] == code for code, row in checked.items())
    summary = json.loads(out[-1])
    assert summary["cards"] == 52 and summary["weakest"]["margin"] > 0
    image, _placed = render(["AS", "7D"], Scene(style=STYLES["light"], felt=FELTS["red"]), seed=9)
    cv2.imwrite(str(tmp_path / "frame.jpg"), image)
    capsys.readouterr()
    assert main(["cards", "recognize", str(tmp_path / "frame.jpg"), "--templates", str(tmp_path / "t.npz")]) == 0
    found = json.loads(capsys.readouterr().out)
    assert sorted(item["card"] for item in found) == ["7D", "AS"]
    assert all(item["confidence"] >= 0.62 and len(item["box"]) == 4 for item in found)
    assert main(["cards", "recognize", str(tmp_path / "nope.jpg"), "--templates", str(tmp_path / "t.npz")]) == 2
    assert "nope.jpg is not a readable image" in capsys.readouterr().err


# ---- confirmation over frames ----------------------------------------------------------------


def seen(card: str | None, x: int = 100, confidence: float = 0.9) -> Detection:
    return Detection(card, confidence, ((0, 0),) * 4, (x, 100, 150, 210), np.zeros((1, 1, 3), np.uint8))


def test_a_card_is_confirmed_after_n_consecutive_frames_and_reported_once() -> None:
    confirmer = Confirmer(frames=3)
    assert confirmer.update([seen("AS")]) == []
    assert confirmer.update([seen("AS", x=104)]) == []  # moved a little: the same card
    assert [d.card for d in confirmer.update([seen("AS", x=101)])] == ["AS"]
    assert confirmer.update([seen("AS")]) == []  # already reported


def test_an_unknown_read_or_a_missing_frame_starts_the_count_again() -> None:
    confirmer = Confirmer(frames=2)
    confirmer.update([seen("KD")])
    confirmer.update([seen(None)])
    assert confirmer.update([seen("KD")]) == []
    confirmer.update([])  # not in this frame
    assert confirmer.update([seen("KD")]) == []
    assert [d.card for d in confirmer.update([seen("KD")])] == ["KD"]


def test_two_cards_side_by_side_are_tracked_apart_and_a_changed_read_is_not_confirmed_early() -> None:
    confirmer = Confirmer(frames=2)
    confirmer.update([seen("2C", x=100), seen("3C", x=600)])
    confirmed = confirmer.update([seen("2C", x=100), seen("8C", x=600)])
    assert [d.card for d in confirmed] == ["2C"]
    assert [d.card for d in confirmer.update([seen("2C", x=100), seen("8C", x=600)])] == ["8C"]


def test_the_camera_reader_reports_each_dealt_card_once_in_deal_order(templates: Templates) -> None:
    camera = SyntheticCamera(Scene(style=STYLES["bold"], felt=FELTS["blue"]), seed=4)
    reader = CameraReader(lambda: camera, Recognizer(templates), confirm=3)
    stop = threading.Event()
    events = reader.events(stop)
    seen_cards: list[str] = []
    for code in ["9H", "JC", "4D"]:
        camera.deal(code)
        for event in events:
            if isinstance(event, CardSeen):
                seen_cards.append(event.code)
                assert 0.62 <= event.confidence <= 1 and event.frame_time > 0
                break
    stop.set()
    assert seen_cards == ["9H", "JC", "4D"]
    assert reader.frames >= 9  # three frames to confirm each
