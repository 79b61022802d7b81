"""`studio tienlen replay`: JSON in, JSON out; the first illegal play is named with its index."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from services.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tienlen"
EXAMPLE: dict[str, Any] = json.loads((FIXTURES / "transcripts" / "spec_chop_chain.json").read_text())
EXPECTED = json.loads((FIXTURES / "expected" / "spec_chop_chain.json").read_text())


def changed(**changes: Any) -> dict[str, Any]:
    transcript = copy.deepcopy(EXAMPLE)
    transcript.update(changes)
    return transcript


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any) -> tuple[int, Any, str]:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(document))
    status = main(["tienlen", "replay", str(path)])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else None, err


def test_a_transcript_replays_to_its_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, capsys, EXAMPLE) == (0, EXPECTED, "")


def test_a_list_of_transcripts_gives_a_list_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = changed(plays=[{"player": "p2", "pass": True}])
    status, out, _ = run(tmp_path, capsys, [EXAMPLE, bad, EXAMPLE])
    assert status == 1
    assert out[0] == out[2] == EXPECTED
    assert out[1]["play_index"] == 0 and "p2 cannot pass: it is p1's turn" in out[1]["error"]


@pytest.mark.parametrize(
    ("changes", "index", "message"),
    [
        ({"plays": [{"player": "p1", "cards": ["2H", "2H"]}]}, 0, "a card is listed twice"),
        ({"plays": [{"player": "p1", "cards": ["XX"]}]}, 0, "plays[0]: card #1: invalid card code: 'XX'"),
        ({"plays": [{"player": "p1", "cards": "2H"}]}, 0, "plays[0]: expected"),
        ({"plays": [{"player": "p1", "pass": False}]}, 0, "plays[0]: expected"),
        ({"plays": [{"player": "p1", "cards": ["2H"]}, {"player": "zed", "pass": True}]}, 1, "zed cannot pass"),
        ({"plays": [{"player": "p1", "cards": ["2H"]}, {"player": "p2", "cards": ["2H"]}]}, 1, "not in their hand"),
    ],
)
def test_the_first_illegal_play_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], index: int, message: str
) -> None:
    status, out, _ = run(tmp_path, capsys, changed(**changes))
    assert status == 1 and out["play_index"] == index and message in out["error"]
    assert set(out) == {"error", "play_index"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"players": ["p1", "p2", "p3", "p4", "p5"]}, "a round needs 2–4 players, got 5"),
        ({"leader": None}, "leader is required when starting_round is false"),
        ({"leader": "p9"}, "leader 'p9' is not a player"),
        ({"starting_round": "yes"}, "starting_round must be true or false"),
        ({"settings": {"scoop": 3}}, "unknown setting(s): scoop"),
        ({"settings": {"red_two": -1}}, "setting red_two: expected a whole number 0–1000"),
        ({"settings": {"instant_wins": ["royal"]}}, "setting instant_wins: unknown kind 'royal'"),
        ({"extra": 1}, "unknown transcript key(s): extra"),
        ({"hands": {"p1": ["3S"]}}, "hands must be given for exactly the players"),
    ],
)
def test_a_bad_deal_or_input_has_no_play_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], message: str
) -> None:
    status, out, _ = run(tmp_path, capsys, changed(**changes))
    assert status == 1 and out["play_index"] is None and message in out["error"]


def test_a_card_dealt_twice_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hands = copy.deepcopy(EXAMPLE["hands"])
    hands["p2"][0] = hands["p1"][0]
    status, out, _ = run(tmp_path, capsys, changed(hands=hands))
    assert status == 1 and f"{hands['p1'][0]} is dealt twice (p1 and p2)" in out["error"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ],
)
def test_unreadable_files_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert main(["tienlen", "replay", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and message in err and err.count("\n") == 1


def test_the_installed_command_reads_stdin() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "tienlen", "replay", "-"],
        input=json.dumps(EXAMPLE),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, json.loads(done.stdout), done.stderr) == (0, EXPECTED, "")


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path) -> None:
    """``studio … | head -c 1``: the output pipe closes early (more output than a pipe holds); no traceback."""
    path = tmp_path / "many.json"
    path.write_text(json.dumps([EXAMPLE] * 500))
    command = [sys.executable, "-m", "services.cli", "tienlen", "replay", str(path)]
    done = subprocess.run(
        f"{' '.join(command)} | head -c 1", shell=True, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.stdout == "[" and "Traceback" not in done.stderr
