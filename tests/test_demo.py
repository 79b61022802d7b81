"""`make demo`'s job: the whole simulated studio plays live rounds, prints them and stops."""

from __future__ import annotations

import re

import pytest

from services.cli import main


def test_the_demo_runs_a_live_studio_round_on_each_table_and_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--rounds", "1", "--tables", "D1,D2", "--rooms", "M1", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "D1-1 settled" in out and "D2-1 settled" in out
    assert "D1-1: dealing…" in out
    last = out.strip().splitlines()[-1]
    summary = re.match(
        r"summary: (\d+) rounds \((?:D1|D2|M1) (\d+), (?:D1|D2|M1) (\d+), (?:D1|D2|M1) (\d+)\), (\d+) wagers", last
    )
    assert summary is not None, out[-300:]
    rounds, *per_table, wagers = map(int, summary.groups())
    assert min(per_table) >= 1 and rounds == sum(per_table) and wagers > 0
    # the Mậu Binh room: a hand dealt online by simulated players, every seat's chi shown, units summing to zero
    lines = out[out.index("── M1-1 settled") :].splitlines()[1:]
    room = "\n".join(lines[: next(i for i, line in enumerate(lines) if not line.startswith("  "))])
    units = [int(line.rsplit("units", 1)[1]) for line in room.splitlines() if line.strip().startswith("seat")]
    assert len(units) >= 2 and sum(units) == 0, room
    assert "shuffle commitment" in room and "no signing key" not in out
