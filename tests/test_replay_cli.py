"""`studio replay`: JSON in, JSON out, one-line errors that name the problem."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from services.cli import main

EXAMPLE: dict[str, Any] = {
    "cards": ["5H", "2D", "KD", "9S", "TH", "4S", "3C", "5C", "2H", "9D", "2S"],
    "decisions": {"A": "draw", "B": "stand"},
    "thresholds": {},
    "wagers": [
        {"id": "w1", "player": "p1", "side": "player", "seat": "A", "stake": 100},
        {"id": "w2", "player": "p2", "side": "banker", "seat": "B", "stake": 50},
        {"id": "w3", "player": "p3", "side": "player", "seat": "B", "stake": 200},
        {"id": "w4", "player": "p2", "side": "banker", "seat": "C", "stake": 50},
    ],
    "insurance": {"p1": 100},
    "settings": {},
}
EXPECTED = {
    "hands": {
        "A": {"cards": ["5H", "TH", "2H"], "points": 7, "rank": 6, "multiplier": 3},
        "B": {"cards": ["2D", "4S"], "points": 6, "rank": 6, "multiplier": 1},
        "C": {"cards": ["KD", "3C", "9D"], "points": 2, "rank": 6, "multiplier": 1},
        "banker": {"cards": ["9S", "5C", "2S"], "points": 6, "rank": 6, "multiplier": 1},
    },
    "outcomes": {"A": "seat", "B": "tie", "C": "banker"},
    "wagers": {"w1": 300, "w2": 0, "w3": 0, "w4": 50},
    "insurance": {"p1": -100},
    "players": {"p1": 200, "p2": 50, "p3": 0},
}


def changed(**changes: Any) -> dict[str, Any]:
    transcript = copy.deepcopy(EXAMPLE)
    transcript.update(changes)
    return transcript


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any) -> tuple[int, str, str]:
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(document))
    status = main(["replay", str(path)])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_issue_example_replays_to_the_documented_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(tmp_path, capsys, EXAMPLE)
    assert (status, err) == (0, "")
    assert json.loads(out) == EXPECTED


def test_stdin_and_a_real_process(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "replay", "-"],
        input=json.dumps([EXAMPLE, EXAMPLE]),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [EXPECTED, EXPECTED]


TOO_FEW = EXAMPLE["cards"][:-1]
BOTH_SIDES = [*EXAMPLE["wagers"], {"id": "w5", "player": "p1", "side": "banker", "seat": "C", "stake": 10}]
NO_INSURANCE_CARDS = ["5H", "2D", "KD", "4S", "TH", "4C", "3C", "5D"]


@pytest.mark.parametrize(
    ("transcript", "message"),
    [
        (changed(cards=["5H", "2D", "KD", "9S", "TH", "4S", "3C", "5X"]), r"cards\[7\]: invalid card code: '5X'"),
        (changed(cards=["5H", "2D", "KD", "9S", "TH", "4S", "3C", "5h"]), r"cards\[7\]: duplicate card 5H"),
        (changed(cards=TOO_FEW), "too few cards: 10 given, the round still waits for the banker's third card"),
        (changed(cards=[*EXAMPLE["cards"], "AC"]), r"too many cards: 1 left after the round settled \(AC\)"),
        (changed(wagers=BOTH_SIDES), "p1 already bets on the player side"),
        (changed(cards=NO_INSURANCE_CARDS, decisions={}), "insurance was not offered .*4S.*: p1"),
        (changed(insurance={"p1": 50}), "insurance of p1 for 50 refused: the amount must be 100"),
        (changed(insurance={"p9": 100}), "p9 has no wager"),
        (changed(wagers=[{**EXAMPLE["wagers"][0], "seat": "D"}]), r"wagers\[0\]: unknown seat: 'D'"),
        (changed(wagers=[{**EXAMPLE["wagers"][0], "stake": 0}]), r"wagers\[0\]: stake must be a positive whole"),
        (changed(wagers=[{**EXAMPLE["wagers"][0], "stake": -5}]), "got -5"),
        (changed(decisions={"A": "draw", "B": "stand", "C": "draw"}), "decision for seat C is inconsistent"),
        (changed(decisions={"A": "hit"}), r"decisions\['A'\]: expected 'draw' or 'stand', got 'hit'"),
        (changed(settings={"house_edge": 5}), "unknown setting.*: house_edge"),
        (changed(settings={"hold_multiple": 2}), "hold_multiple: 2 is below the largest possible loss"),
        (changed(thresholds={"A": 9}), r"thresholds\['A'\]: expected a whole number 1–5, got 9"),
        (changed(colour="red"), "unknown transcript key.*: colour"),
        (changed(decisions={"A": ["draw"]}), r"decisions\['A'\]: expected 'draw' or 'stand', got \['draw'\]"),
        (changed(wagers=[EXAMPLE["wagers"][0]] * 2), r"wagers\[1\]: duplicate id 'w1' \(already wagers\[0\]\)"),
        (changed(wagers=[{**EXAMPLE["wagers"][0], "colour": 1}]), r"wagers\[0\]: unknown key\(s\) colour"),
        (changed(wagers=[{**EXAMPLE["wagers"][0], "player": 1}]), r"wagers\[0\]: player must be a non-empty string"),
        (
            changed(wagers=[{**EXAMPLE["wagers"][0], "stake": 10**7}]),
            r"wagers\[0\]: wager 'w1' .* exceeds the table maximum",
        ),
        ([1, 2], None),
    ],
)
def test_invalid_transcripts_give_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transcript: Any, message: str | None
) -> None:
    if message is None:  # a list of non-objects: one error per element
        status, out, err = run(tmp_path, capsys, transcript)
        assert status == 1 and err == ""
        assert [item["error"] for item in json.loads(out)] == ["a transcript must be a JSON object, got int"] * 2
        return
    status, out, err = run(tmp_path, capsys, transcript)
    assert (status, out) == (1, "")
    assert err.startswith("studio replay: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_a_list_keeps_good_results_and_marks_bad_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(tmp_path, capsys, [EXAMPLE, changed(cards=TOO_FEW), EXAMPLE])
    results = json.loads(out)
    assert status == 1 and err == ""
    assert results[0] == results[2] == EXPECTED
    assert results[1] == {"error": "too few cards: 10 given, the round still waits for the banker's third card"}


def test_unreadable_and_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["replay", str(bad)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    assert main(["replay", str(binary)]) == 1
    assert "not UTF-8 text" in capsys.readouterr().err
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["replay", str(nested)]) == 1
    assert capsys.readouterr().err == f"studio replay: {nested}: JSON nested too deeply\n"


def test_thresholds_are_per_seat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One decider on two seats: each seat times out on its own entry (A: 3, B: 5)."""
    transcript = changed(
        cards=["3H", "2D", "KD", "9S", "TH", "2S", "3C", "5C", "2H", "9D", "AC", "2C"],
        decisions={},
        wagers=[
            {"id": "a", "player": "p1", "side": "player", "seat": "A", "stake": 10},
            {"id": "b", "player": "p1", "side": "player", "seat": "B", "stake": 10},
        ],
        thresholds={"A": 3, "B": 5},
        insurance={},
    )
    status, out, err = run(tmp_path, capsys, transcript)
    assert status == 0, err
    hands = json.loads(out)["hands"]
    assert hands["A"]["cards"] == ["3H", "TH", "2H"]  # 3 points ≤ 3: draws
    assert hands["B"]["cards"] == ["2D", "2S", "9D"]  # 4 points ≤ 5: draws (A's 3 would have stood)
    assert hands["C"]["cards"] == ["KD", "3C", "AC"]  # no player-side wager: table default 4
