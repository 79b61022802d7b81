"""Benchmark: camera recogniser frames per second at 1280×720 with 1–4 cards in view, on one core.

    .venv/bin/python bench/camera.py [--frames 400]
    .venv/bin/python bench/camera.py --devset [--frames 1000] [--deck fixtures/decks/tigullio-international]

``--devset``: the recogniser that learns the deck (``hardware.camera.learned``) calibrated on 52 photo-like renders
of a real French-pattern design (``hardware.camera.devset``, seed 1, a wooden table), then reading held-out frames
(1280×720, 1–6 cards, seeds 1000+, wood, felt and cloth, other light): frames/s, the same floor, and the accuracy
table — right, unknown, wrong, missed (no outline found), phantoms, and the hard cards (glare over an index, heavy
blur), where unknown is the right answer and wrong is not. ``--deck``: another deck's 52 faces (default
``fixtures/decks/svg-cards``; ``fixtures/decks/tigullio-international`` is a second design,
``fixtures/decks/kennard-four-colour-jumbo`` a third, four-colour with jumbo indices, that tuned nothing).

The recogniser is calibrated on the generated deck, then reads synthetic frames (rendered
before timing, moderate distortion, glyphs and felts it was not calibrated on). OpenCV and
the BLAS are held to one thread. Floor, same frames and run: the outline pass alone (grey,
Otsu threshold, contours, the four-corner fit): what any card finder pays per frame.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2

from hardware.camera import Recognizer, calibrate
from hardware.camera.devset import SVG_CARDS
from hardware.camera.recognizer import Image, find_cards
from hardware.sim.camera import FELTS, STYLES, Scene, calibration_photos, render

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]


def devset(count: int, deck: Path, faces: dict[str, Any]) -> None:
    from hardware.camera.devset import calibration_set, scenes, score
    from hardware.camera.learned import DeckReader, learn, outlines

    start = time.perf_counter()
    reader = DeckReader(learn(calibration_set(faces, 1)))
    learned_s = time.perf_counter() - start
    held_out = list(scenes(faces, 1000, count))
    cpu = time.process_time()
    for scene in held_out:
        outlines(scene.frame)
    floor_cpu = time.process_time() - cpu
    cpu = time.process_time()
    tally = score(reader.recognize, iter(held_out))
    read_cpu = time.process_time() - cpu
    cards = sum(len(scene.cards) for scene in held_out)
    print(
        f"calibrated on 52 renders of {deck.name} in {learned_s:.1f} s; {count} held-out frames "
        f"1280×720 with {cards} cards (1–6 each), one thread"
    )
    print(f"{'what':<44}{'frames/s':>9}")
    print(f"{'recognise: outlines + flatten + read':<44}{count / read_cpu:>9.1f}")
    print(f"{'floor: outlines only':<44}{count / floor_cpu:>9.1f}")
    figures = tally.as_dict()
    print(
        f"cards (not hard): right {tally.right}, unknown {tally.unknown}, wrong {tally.wrong}, missed {tally.missed};"
        f" phantoms {tally.phantom}, duplicates {tally.duplicate}; hard: right {tally.hard_right}, "
        f"unknown {tally.hard_unknown}, wrong {tally.hard_wrong}"
    )
    for truth, read, confidence in tally.confusions[:20]:
        print(f"  wrong: {truth} read as {read} ({confidence:.2f})")
    figures |= {"deck": deck.name, "frames_per_s": round(count / read_cpu, 1)}
    figures |= {"floor_frames_per_s": round(count / floor_cpu, 1)}
    print(json.dumps(figures))  # the last line: the figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--devset", action="store_true", help="the learned recogniser on the photo-like dev set")
    parser.add_argument("--deck", type=Path, default=SVG_CARDS, help="the deck's 52 faces (with --devset)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if args.devset:
        from hardware.camera.devset import load_deck

        try:
            faces = load_deck(args.deck)
        except ValueError as error:
            parser.error(f"--deck {error}")
        devset(args.frames, args.deck, faces)
        return
    recognizer = Recognizer(calibrate(calibration_photos()))
    rng = random.Random(7)
    frames = []
    for index in range(args.frames):
        scene = Scene(
            felt=rng.choice([FELTS["blue"], FELTS["red"]]), style=rng.choice([STYLES["bold"], STYLES["light"]])
        )
        image, placed = render(rng.sample(DECK, 1 + index % 4), scene, seed=index)
        frames.append((image, sorted(p.code for p in placed)))

    def timed(work: Callable[[Image], object]) -> tuple[float, list[tuple[float, int]]]:
        per_frame = []
        cpu = time.process_time()
        for image, codes in frames:
            start = time.perf_counter()
            work(image)
            per_frame.append((time.perf_counter() - start, len(codes)))
        return time.process_time() - cpu, per_frame

    floor_cpu, floor = timed(find_cards)
    cpu, full = timed(recognizer.recognize)
    right = sum(sorted(d.card or "?" for d in recognizer.recognize(image)) == codes for image, codes in frames)
    print(f"{args.frames} frames 1280×720, 1–4 cards (2.5 on average), one thread; {right} read in full")
    print(f"{'what':<44}{'frames/s':>9}{'p50 ms':>8}{'p99 ms':>8}")
    for label, seconds, rows in (
        ("recognise: outlines + flatten + read", cpu, full),
        ("floor: outlines only", floor_cpu, floor),
    ):
        times = sorted(t for t, _ in rows)
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"{label:<44}{len(rows) / seconds:>9.1f}{1000 * statistics.median(times):>8.1f}{1000 * p99:>8.1f}")
    for count in range(1, 5):
        mean = statistics.fmean(t for t, cards in full if cards == count)
        print(f"  {count} card(s): {1000 * mean:.1f} ms/frame, {1000 * mean / count:.1f} ms/card")
    print(f"ratio recognise/floor (CPU): {cpu / floor_cpu:.1f}×")
    times = sorted(t for t, _ in full)
    figures = {
        "frames": args.frames, "read_in_full": right, "frames_per_s": round(len(full) / cpu, 1),
        "p50_ms": round(1000 * statistics.median(times), 2), "floor_frames_per_s": round(len(floor) / floor_cpu, 1),
        "ratio_cpu": round(cpu / floor_cpu, 2),
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: the figures


if __name__ == "__main__":
    main()
