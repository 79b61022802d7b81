"""`studio maubinh score` and `studio maubinh arrange`: JSON in and out, one-line errors, exit status 1 on bad input."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from services.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "maubinh"
EXAMPLE: dict[str, Any] = json.loads((FIXTURES / "tables" / "spec_binh_lung_21.json").read_text())
EXPECTED = json.loads((FIXTURES / "expected" / "spec_binh_lung_21.json").read_text())
LEFT_TABLE: dict[str, Any] = json.loads((FIXTURES / "tables" / "leaver.json").read_text())
DRAGON = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS".split()
HAND = "AS KD 8C 8H 2S 5D 7H JC JS 3C 9D TD QH".split()


def changed(player: str = "strong", chi: str | None = None, cards: Any = None, **top: Any) -> dict[str, Any]:
    table = copy.deepcopy(EXAMPLE)
    if chi is not None:
        table["players"][player][chi] = cards
    table.update(top)
    return table


def score(tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any) -> tuple[int, Any, str]:
    path = tmp_path / "table.json"
    path.write_text(json.dumps(document))
    status = main(["maubinh", "score", str(path)])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else None, err


def arrange(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    status = main(["maubinh", "arrange", *args])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else None, err


def test_a_table_scores_to_its_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert score(tmp_path, capsys, EXAMPLE) == (0, EXPECTED, "")
    assert EXPECTED["pairs"] == [
        {"a": "strong", "b": "mis_set", "chi": [1, 1, 1], "units": 21, "scoop": True, "instant": None}
    ]


def test_a_leaver_is_written_left_true(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = score(tmp_path, capsys, LEFT_TABLE)
    assert status == 0 and out["players"] == {"gone": -10, "mis_set": -18, "strong": 28}
    assert out["hands"]["gone"] == {
        "chi1": None, "chi2": None, "chi3": None, "mis_set": False, "instant": None, "left": True
    }  # fmt: skip


def test_a_list_of_tables_gives_a_list_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = changed(chi="chi3", cards=["QS", "QH"])
    status, out, err = score(tmp_path, capsys, [EXAMPLE, bad, LEFT_TABLE])
    assert status == 1 and err == ""
    assert out[0] == EXPECTED and out[2]["players"]["strong"] == 28
    assert out[1] == {"error": "players['strong'].chi3: expected 3 cards, got 2"}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (changed(chi="chi1", cards=["AS", "AH", "AD", "AC"]), "players['strong'].chi1: expected 5 cards, got 4"),
        (changed(chi="chi3", cards=["QS", "QH", "AS"]), "players['strong'].chi3: AS is listed twice"),
        (changed(chi="chi3", cards=["QS", "QH", "JS"]), "JS is dealt twice (strong and mis_set)"),
        (changed(chi="chi3", cards=["QS", "QH", "1C"]), "players['strong'].chi3: card #3: invalid card code: '1C'"),
        (changed(chi="chi3", cards="QS QH 4C"), "players['strong'].chi3: expected a list of card codes"),
        (changed(chi="chi3", cards=None), "players['strong'].chi3: expected a list of card codes, got None"),
        (changed(players={"solo": EXAMPLE["players"]["strong"]}), "a table needs 2–4 players, got 1"),
        (changed(players={f"p{i}": {"left": True} for i in range(5)}), "a table needs 2–4 players, got 5"),
        (changed(players={"a": {"left": False}, "b": {"left": True}}), "players['a']: expected {\"chi1\""),
        (changed(players=["strong", "mis_set"]), "players must be an object of name → hand"),
        (changed(settings={"scoop": 2}), "unknown setting(s): scoop"),
        (changed(settings={"scoop_multiplier": 0}), "setting scoop_multiplier: expected a whole number 1–10, got 0"),
        (changed(settings={"optional_instant_wins": ["royal"]}), "'royal' is not an optional kind"),
        (changed(extra=1), "unknown table key(s): extra"),
        ({"settings": {}}, "missing table key: players"),
        ("a table", "a table must be a JSON object, got str"),
    ],
)
def test_bad_tables_get_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: Any, message: str
) -> None:
    status, out, err = score(tmp_path, capsys, table)
    assert status == 1 and err == "" and set(out) == {"error"}
    assert message in out["error"] and "\n" not in out["error"]


@pytest.mark.parametrize(("text", "message"), [("{not json", "not valid JSON"), (None, "cannot read")])
def test_unreadable_files_get_one_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, message: str
) -> None:
    path = tmp_path / "bad.json"
    if text is not None:
        path.write_text(text)
    assert main(["maubinh", "score", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("studio maubinh score: ") and message in err and err.count("\n") == 1


def test_arrange_prints_the_best_arrangement(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = arrange(capsys, *HAND)
    assert (status, err) == (0, "")
    assert set(out) == {"chi1", "chi2", "chi3", "expected_units", "instant"} and out["instant"] is None
    assert sorted(out["chi1"] + out["chi2"] + out["chi3"]) == sorted(HAND)
    assert [len(out[chi]) for chi in ("chi1", "chi2", "chi3")] == [5, 5, 3]
    assert isinstance(out["expected_units"], float) and out["expected_units"] > 0


def test_arrange_reports_an_instant_win(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = arrange(capsys, *DRAGON)
    assert status == 0 and out["instant"] == "rong_cuon"
    pairs = "2S 2H 3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 8D".split()
    assert arrange(capsys, *pairs)[1]["instant"] is None
    settings = json.dumps({"optional_instant_wins": ["six_pairs"]})
    assert arrange(capsys, "--settings", settings, *pairs)[1]["instant"] == "six_pairs"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (DRAGON[:12], "hand to arrange: expected 13 cards, got 12"),
        ([], "hand to arrange: expected 13 cards, got 0"),
        ([*DRAGON[:12], "2S"], "hand to arrange: 2S is listed twice"),
        ([*DRAGON[:12], "ZZ"], "card #13: invalid card code: 'ZZ'"),
        (["--settings", "{oops", *DRAGON], "--settings is not valid JSON"),
        (["--settings", '{"scoop": 1}', *DRAGON], "unknown setting(s): scoop"),
    ],
)
def test_arrange_refuses_bad_input_in_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = arrange(capsys, *args)
    assert status == 1 and out is None
    assert err.startswith("studio maubinh arrange: ") and message in err and err.count("\n") == 1


def test_the_installed_command_reads_stdin() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "maubinh", "score", "-"],
        input=json.dumps([EXAMPLE]),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, json.loads(done.stdout), done.stderr) == (0, [EXPECTED], "")
