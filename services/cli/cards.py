"""``studio cards``: camera calibration and recognition tools.

studio cards calibrate DIR --out FILE [--json]  learn the deck from one photo per card (AS.jpg, TD.png, …)
studio cards recognize IMAGE --templates FILE  JSON list of {card, confidence, box} on stdout
studio cards sim-deck DIR                    the generated 52-card calibration set, as photos
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cv2

from hardware.camera import (
    CalibrationError,
    Problem,
    Reading,
    RecognitionError,
    calibrate_read,
    read_calibration_dir,
    self_check,
)
from hardware.camera.learned import learn_read, load_reader
from hardware.camera.learned import self_check as learned_self_check
from hardware.camera.margins import margin_table, weak_margin
from hardware.sim.camera import calibration_photos
from services.cli.commands import help_of


def register(commands: Any) -> None:
    cards = commands.add_parser("cards", help=help_of("cards"))
    actions = cards.add_subparsers(dest="action", required=True)
    cal = actions.add_parser("calibrate", help="learn the studio's deck from a folder of photos named by card code")
    cal.add_argument("directory", type=Path)
    cal.add_argument("--out", type=Path, required=True, help="the calibration file to write (.npz)")
    cal.add_argument(
        "--method", choices=("auto", "learned", "glyphs"), default="auto",
        help="learned: any printed deck, from its index corners and faces; glyphs: the rank and suit glyphs of a "
        "plain index (the project's synthetic deck); auto (default): whichever reads every photo back with the "
        "wider margin",
    )  # fmt: skip
    cal.add_argument("--json", action="store_true", help="print one JSON object (the margin table in it) instead of "
                     "the table and the summary line")  # fmt: skip
    cal.set_defaults(run=run_calibrate)
    rec = actions.add_parser("recognize", help="read the face-up cards in an image")
    rec.add_argument("image", type=Path)
    rec.add_argument("--templates", type=Path, required=True)
    rec.add_argument("--threshold", type=float, default=None, help="below it a card is unknown (null); default: the "
                     "recogniser's own")  # fmt: skip
    rec.add_argument("--evidence", type=Path, default=None, help="write each card's flattened face here")
    rec.set_defaults(run=run_recognize)
    sim = actions.add_parser("sim-deck", help="write the generated 52-card calibration photos")
    sim.add_argument("directory", type=Path)
    sim.add_argument("--seed", type=int, default=0)
    sim.set_defaults(run=run_sim_deck)


def run_calibrate(args: argparse.Namespace) -> int:
    """Every photo looked at: all that cannot be used are named at once, each with what to change (exit 1, nothing
    written); a clean set is read again with its own templates before it is saved, and printed as the margin table —
    each card, its confidence, its margin over its nearest look-alike and that card, weakest first, the weak marked."""
    if not args.directory.is_dir():
        print(f"studio cards calibrate: {args.directory} is not a folder", file=sys.stderr)
        return 2
    photos, names, problems = read_calibration_dir(args.directory)
    methods = ("learned", "glyphs") if args.method == "auto" else (args.method,)
    candidates: list[tuple[str, Any, dict[str, Reading]]] = []
    for method in methods:
        try:
            made: Any = (learn_read if method == "learned" else calibrate_read)(photos, names, problems)
        except CalibrationError as error:
            if method != methods[0]:
                continue  # auto: the photos were fine for the first method; this one cannot use them
            print(f"studio cards calibrate: {len(error.problems)} problem(s) in {args.directory}:", file=sys.stderr)
            for problem in error.problems:
                print(f"  {problem}", file=sys.stderr)
            return 1
        candidates.append((method, made, (learned_self_check if method == "learned" else self_check)(made, photos)))

    def quality(candidate: tuple[str, Any, dict[str, Reading]]) -> tuple[int, float]:
        readings = candidate[2]
        return sum(r.card == code for code, r in readings.items()), min(r.margin for r in readings.values())

    method, made, readings = max(candidates, key=quality)
    weak = weak_margin(method)
    table = margin_table(readings, weak)
    if not args.json:
        print(f"method: {method}")
        print(f"{'card':<6}{'read as':<9}{'confidence':>11}{'margin':>8}  nearest look-alike")
        for row in table:
            print(f"{row.card:<6}{row.read_as or 'unknown':<9}{row.confidence:>11.3f}{row.margin:>8.3f}  "
                  f"{row.nearest or '-':<7}{'weak' if row.weak else ''}".rstrip())  # fmt: skip
    wrong = [
        Problem(names[row.card], f"read back as {row.read_as or 'unknown'}") for row in table if row.read_as != row.card
    ]
    if wrong:
        print(f"studio cards calibrate: {len(wrong)} photo(s) do not read back as their card:", file=sys.stderr)
        for problem in sorted(wrong, key=lambda problem: problem.photo):
            print(f"  {problem}", file=sys.stderr)
        return 1
    made.save(args.out)
    summary: dict[str, Any] = {
        "templates": str(args.out), "method": method, "cards": 52,
        "weakest": {"card": table[0].card, "nearest": table[0].nearest, "margin": round(table[0].margin, 3)},
        "weak_margin": round(weak, 3), "weak": [row.card for row in table if row.weak],
    }  # fmt: skip
    if args.json:
        summary["margins"] = [row.to_dict() for row in table]
    print(json.dumps(summary))
    return 0


def run_recognize(args: argparse.Namespace) -> int:
    image = cv2.imread(str(args.image), cv2.IMREAD_COLOR)
    if image is None:
        print(f"studio cards recognize: {args.image} is not a readable image", file=sys.stderr)
        return 2
    try:
        recognizer = load_reader(args.templates, args.threshold)
    except RecognitionError as error:
        print(f"studio cards recognize: {error}", file=sys.stderr)
        return 2
    detections = recognizer.recognize(image)
    if args.evidence:
        args.evidence.mkdir(parents=True, exist_ok=True)
        for index, detection in enumerate(detections):
            cv2.imwrite(str(args.evidence / f"{index:02d}-{detection.card or 'unknown'}.png"), detection.evidence)
    print(json.dumps([detection.to_dict() for detection in detections]))
    return 0


def run_sim_deck(args: argparse.Namespace) -> int:
    args.directory.mkdir(parents=True, exist_ok=True)
    for code, photo in calibration_photos(args.seed).items():
        cv2.imwrite(str(args.directory / f"{code}.png"), photo)
    print(json.dumps({"directory": str(args.directory), "photos": 52}))
    return 0
