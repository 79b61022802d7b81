"""`make demo`'s job: the whole simulated studio plays live rounds, prints them and stops."""

from __future__ import annotations

import re
import signal
import urllib.request
from pathlib import Path

import pytest

from services.cli import main
from tests.support import studio_command


def test_the_demo_runs_a_live_studio_round_on_each_table_and_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    command = ["demo", "--rounds", "1", "--tables", "D1,D2", "--rooms", "M1", "--tienlen-rooms", "L1", "--seed", "3",
               "--baccarat", "B1", "--dragontiger", "X1"]  # fmt: skip
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "D1-1 settled" in out and "D2-1 settled" in out
    assert "D1-1: dealing…" in out
    last = out.strip().splitlines()[-1]
    summary = re.match(r"summary: (\d+) rounds \(([^)]*)\), (\d+) wagers", last)
    assert summary is not None, out[-300:]
    per_table = {name: int(n) for name, n in (item.split() for item in summary.group(2).split(", "))}
    assert set(per_table) == {"D1", "D2", "M1", "L1", "B1", "X1"} and min(per_table.values()) >= 1
    assert int(summary.group(1)) == sum(per_table.values()) and int(summary.group(3)) > 0
    # the coup tables: a baccarat coup of 4–6 cards and a Dragon Tiger coup of 2, each with its winner and road
    for title, hands in (
        ("── B1-1 settled (baccarat", ("player", "banker")),
        ("── X1-1 settled (Dragon", ("dragon", "tiger")),
    ):
        coup = out[out.index(title) :].splitlines()[1:6]
        assert [line.split()[0] for line in coup[:2]] == list(hands), coup
        assert coup[2].split()[:2] in (["winner", hands[0]], ["winner", hands[1]], ["winner", "tie"]), coup
    # the Tiến Lên room: a round dealt online, played out by simulated players, payments summing to zero
    after = out[out.index("── L1-1 settled") :].splitlines()[1:]
    block = after[: next(i for i, line in enumerate(after) if not line.startswith("  "))]
    units = [int(line.split("units")[1].split()[0]) for line in block if line.startswith("  seat")]
    assert len(units) >= 2 and sum(units) == 0 and sum(line.endswith("wins") for line in block) == 1
    # the Mậu Binh room: a hand dealt online by simulated players, every seat's chi shown, units summing to zero
    lines = out[out.index("── M1-1 settled") :].splitlines()[1:]
    room = "\n".join(lines[: next(i for i, line in enumerate(lines) if not line.startswith("  "))])
    units = [int(line.rsplit("units", 1)[1]) for line in room.splitlines() if line.strip().startswith("seat")]
    assert len(units) >= 2 and sum(units) == 0, room
    assert "shuffle commitment" in room and "no signing key" not in out


def test_the_demo_kept_running_prints_a_working_page_for_every_table_and_room(tmp_path: Path) -> None:
    """``studio demo --forever`` is for people: every page it names answers, the rooms' too."""
    arguments = ["demo", "--forever", "--tables", "D1", "--rooms", "MB7", "--tienlen-rooms", "TL7",
                 "--baccarat", "B7", "--dragontiger", "DT7"]  # fmt: skip
    with studio_command(arguments, tmp_path, until="player's page token") as (process, out):
        pages = dict(re.findall(r"^\s+(\S+ (?:room page|player's page|dealer console|overlay))\s+(\S+)", out, re.M))
        kinds = ("player's page", "dealer console", "overlay")
        expected = {"MB7 room page", "TL7 room page"} | {f"{t} {kind}" for t in ("D1", "B7", "DT7") for kind in kinds}
        assert set(pages) == expected, out
        for url in pages.values():
            with urllib.request.urlopen(url) as response:
                assert response.status == 200 and b"/static/studio.js" in response.read(), url
        assert "/room/MB7" in pages["MB7 room page"] and "/room/TL7" in pages["TL7 room page"]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
