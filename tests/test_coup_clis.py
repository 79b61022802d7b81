"""`studio baccarat` and `studio dragontiger`: replay mirrors its input (one object or a list), errors exit 1;
`rtp` gives each bet's exact return, as one JSON object with --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from services.cli import main

GOLDEN = json.loads((Path(__file__).parent / "games" / "baccarat" / "golden.json").read_text())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_baccarat_replay_mirrors_a_list_and_a_single_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "coups.json"
    path.write_text(json.dumps([case["transcript"] for case in GOLDEN]))
    status, out, _ = run(capsys, "baccarat", "replay", str(path))
    assert status == 0 and json.loads(out) == [case["expected"] for case in GOLDEN]
    path.write_text(json.dumps(GOLDEN[0]["transcript"]))
    status, out, _ = run(capsys, "baccarat", "replay", str(path))
    assert status == 0 and json.loads(out) == GOLDEN[0]["expected"]


def test_a_bad_coup_in_a_list_is_named_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "coups.json"
    path.write_text(json.dumps([GOLDEN[0]["transcript"], {"cards": ["9H", "8C"]}]))
    status, out, _ = run(capsys, "baccarat", "replay", str(path))
    assert status == 1 and json.loads(out)[1] == {"error": "the coup needs more cards than the 2 given"}
    status, _, err = run(capsys, "baccarat", "replay", str(tmp_path / "missing.json"))
    assert status == 1 and err.count("\n") == 1 and "cannot read" in err


def test_dragon_tiger_replay_reads_stdin() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "dragontiger", "replay", "-"],
        input=json.dumps({"cards": ["QS", "KD"], "bets": [{"on": "tiger", "stake": 500}]}),
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["payouts"] == [{"on": "tiger", "stake": 500, "net": 500}]


@pytest.mark.parametrize(
    ("argv", "spots"),
    [
        (["baccarat", "rtp", "--json"], ["player", "banker", "tie", "player_pair", "banker_pair"]),
        (["dragontiger", "rtp", "--json", "--no-tie-half-back"], ["dragon", "tiger", "tie", "suited_tie"]),
    ],
)
def test_rtp_as_json_names_every_bet(argv: list[str], spots: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, *argv)
    answer: dict[str, Any] = json.loads(out.splitlines()[-1])
    assert status == 0 and list(answer) == spots
    assert all(0.5 < each["rtp"] < 1 and "/" in each["exact"] for each in answer.values())
    if argv[0] == "dragontiger":  # all lost on a tie: 2 × (1 − P(tie)) / 2
        assert round(answer["dragon"]["rtp"], 6) == 0.925301


def test_rtp_in_words_and_a_bad_option_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "baccarat", "rtp", "--decks", "6", "--banker-commission-bps", "400")
    assert status == 0 and "decks 6, banker_commission_bps 400" in out and "house edge" in out
    with pytest.raises(SystemExit) as refused:
        main(["baccarat", "rtp", "--decks", "0"])
    assert refused.value.code == 2
    assert "a shoe's decks is 1–8, got 0" in capsys.readouterr().err
