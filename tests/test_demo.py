"""`make demo`'s job: the whole simulated studio plays live rounds, prints them and stops."""

from __future__ import annotations

import re

import pytest

from services.cli import main


def test_the_demo_runs_a_live_studio_round_on_each_table_and_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--rounds", "1", "--tables", "D1,D2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "D1-1 settled" in out and "D2-1 settled" in out
    assert "D1-1: dealing…" in out
    summary = re.match(r"summary: (\d+) rounds \(D1 (\d+), D2 (\d+)\), (\d+) wagers", out.strip().splitlines()[-1])
    assert summary is not None, out[-300:]
    rounds, d1, d2, wagers = map(int, summary.groups())
    assert d1 >= 1 and d2 >= 1 and rounds == d1 + d2 and wagers > 0
