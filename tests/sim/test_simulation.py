"""The deterministic studio simulation: seeded rounds with every fault keep every invariant; a run is reproduced
exactly by its seed; and a deliberately broken invariant is caught within a few seeds (the checks can fail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text

from services.cli import main
from services.db import make_engine, migrate
from services.games.pokdeng import port as pokdeng_port
from services.ledger import settlement
from services.sim.runs import Report, SimSettings
from services.sim.world import Simulation

ROUNDS = 60  # per seed, across 2 tables
SEEDS = (1, 2)  # make test: 120 rounds with every fault (CI simulates 2,000 besides)
MUTANT_SEEDS = range(1, 9)  # a broken invariant must be caught within these


def simulate(engine: Engine, seed: int, rounds: int, **options: Any) -> Report:
    return Simulation(SimSettings(seed, rounds=rounds, **options), engine, tag=f"s{seed}-").run()


@pytest.mark.parametrize("seed", SEEDS)
def test_seeded_rounds_with_every_fault_keep_every_invariant(database: Engine, seed: int) -> None:
    report = simulate(database, seed, ROUNDS)
    assert report.violation is None, "\n".join([report.violation or "", *report.trace, report.command()])
    assert report.rounds >= ROUNDS
    assert report.checks > ROUNDS  # the invariants were checked after the steps that wrote, not only at the end
    struck = {name.removeprefix("fault_") for name, count in report.counts.items() if name.startswith("fault_")}
    assert len(struck) >= 10, f"only {sorted(struck)} of the faults struck"
    assert report.counts.get("accepted_bets", 0) > 0 and report.counts.get("refused_invalid_wager", 0) > 0


def test_coup_tables_beside_a_pok_deng_one_keep_every_invariant_under_every_fault(database: Engine) -> None:
    """Baccarat and Dragon Tiger from 8-deck shoes: the burn at each new shoe (a new shoe mid-coup lets the coup finish
    first), copies of a card in one shoe, the coups' bets and settlement, under the same faults as Pok Deng's tables."""
    report = simulate(database, 7, ROUNDS, tables=1, baccarat=1, dragontiger=1)
    assert report.violation is None, "\n".join([report.violation or "", *report.trace, report.command()])
    assert report.command().endswith("--tables 1 --baccarat 1 --dragontiger 1 --faults all")
    with database.connect() as connection:
        for table in ("s7-B1", "s7-D1"):
            settled = connection.execute(
                text("SELECT count(*) FROM rounds WHERE table_id = :t AND settled_at IS NOT NULL"), {"t": table}
            ).scalar_one()
            burned = connection.execute(
                text("SELECT count(*) FROM shoe_journal WHERE table_id = :t AND reason LIKE '%new shoe%'"), {"t": table}
            ).scalar_one()
            assert settled >= 8 and burned > 0, (table, settled, burned)


def test_a_controller_killed_between_steps_inside_a_transaction_or_before_it_publishes_recovers(
    fresh_engine: Callable[[], Engine],
) -> None:
    report = simulate(fresh_engine(), 24, 40, faults=frozenset({"crash"}))  # a seed that meets each kind of kill
    assert report.violation is None, "\n".join([report.violation or "", *report.trace])
    assert report.counts["killed_in_a_transaction"] > 0 and report.counts["killed_before_publishing"] > 0
    assert report.counts["controller_died"] > report.counts["killed_in_a_transaction"]  # and between steps


def test_without_faults_the_rounds_run_clean(database: Engine) -> None:
    report = simulate(database, 11, 20, faults=frozenset())
    assert report.violation is None, report.violation
    assert not any(name.startswith(("fault_", "controller_died", "answered_503")) for name in report.counts)


@pytest.fixture
def fresh_engine(tmp_path: Path) -> Iterator[Callable[[], Engine]]:
    engines: list[Engine] = []

    def make() -> Engine:
        engine = make_engine(f"sqlite:///{tmp_path / f'sim{len(engines)}.db'}")
        migrate(engine)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.dispose()


def test_a_seed_runs_the_same_steps_every_time(fresh_engine: Callable[[], Engine]) -> None:
    first, second = simulate(fresh_engine(), 5, 12), simulate(fresh_engine(), 5, 12)
    assert first.violation is None and first.steps > 500
    assert (first.digest, first.steps, first.counts) == (second.digest, second.steps, second.counts)
    other = simulate(fresh_engine(), 6, 12)
    assert other.digest != first.digest


def test_the_command_reproduces_a_run_whatever_the_hash_seed(tmp_path: Path) -> None:
    """Two processes with different string hashing (set iteration order) take exactly the same steps."""
    digests = []
    for hash_seed in ("1", "2"):
        environment = dict(os.environ, PYTHONHASHSEED=hash_seed, STUDIO_DATABASE_URL="")
        done = subprocess.run(
            [sys.executable, "-m", "services.cli", "sim", "--seed", "7", "--rounds", "8", "--quiet"],
            capture_output=True, text=True, env=environment, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        summary = json.loads(done.stdout.splitlines()[-1])
        assert summary["violations"] == 0 and summary["rounds"] >= 8
        digests.append(summary["digests"]["7"])
    assert digests[0] == digests[1]


# ---- the checks can fail: production code broken on purpose is caught -------------------------------


def first_violation(make: Callable[[], Engine], rounds: int = 12, **options: Any) -> tuple[int, str] | None:
    for seed in MUTANT_SEEDS:
        report = simulate(make(), seed, rounds, **options)
        if report.violation is not None:
            return seed, report.violation
    return None


def test_a_raised_stakes_second_hold_left_pending_is_caught(
    fresh_engine: Callable[[], Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bug the simulation once found, in today's shape: a raised stake settled through its first hold only (the
    second neither released nor lost) — every transfer still balances, the escrow still matches its holds."""
    real = settlement.stake_lines

    def mutant(result: Any, holds: list[Any]) -> list[Any]:
        return real(result, holds)[:1]

    monkeypatch.setattr(settlement, "stake_lines", mutant)
    caught = first_violation(fresh_engine, rounds=16)
    assert caught is not None, "a hold never resolved went unnoticed"
    assert "resolved exactly once" in caught[1] and "pending" in caught[1], caught


def test_a_face_down_card_in_the_public_view_is_caught(
    fresh_engine: Callable[[], Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pokdeng_port.public_view

    def leaky(round_: Any) -> dict[str, Any]:
        view = real(round_)
        view["debug"] = [str(event.card) for event in round_.events if hasattr(event, "face_up")]
        return view

    monkeypatch.setattr(pokdeng_port, "public_view", leaky)
    caught = first_violation(fresh_engine)
    assert caught is not None and caught[0] <= 2, caught  # the first round with a face-down card shows it
    assert "before its reveal" in caught[1]


def test_a_controller_that_forgets_the_deck_on_restart_is_caught(
    fresh_engine: Callable[[], Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recovery that skips the shoe journal: after a crash the controller would take a card already dealt, or
    report the deck's end short of the cards the journal has."""
    from services.controller import table

    real = table.TableController.recover

    def forgetful(self: table.TableController) -> None:
        real(self)
        self.deck = table.DeckTracker()

    monkeypatch.setattr(table.TableController, "recover", forgetful)
    caught = first_violation(fresh_engine, rounds=30)
    assert caught is not None, "a deck forgotten on restart went unnoticed"
    assert any(sign in caught[1] for sign in ("twice", "recovered", "the journal says")), caught


# ---- the rooms: Mậu Binh and Tiến Lên, from the shoe and online ---------------------------------------


ROOMS_ONLY = {"tables": 1, "maubinh": 2, "tienlen": 2}  # one of each from the shoe, one online


def test_rooms_run_with_every_fault_and_their_players_sit_leave_arrange_and_play(
    fresh_engine: Callable[[], Engine],
) -> None:
    report = simulate(fresh_engine(), 3, 24, **ROOMS_ONLY)
    assert report.violation is None, "\n".join([report.violation or "", *report.trace])
    counts = report.counts
    for action in ("sit", "ready", "arrange", "play", "pass", "leave"):
        assert counts.get(f"accepted_{action}", 0) > 0, (action, counts)
    assert counts.get("refused_rule_violation", 0) > 0, "plays the rules refuse, binh lủng unconfirmed: refused"


def test_another_players_hand_in_a_seats_view_is_caught(
    fresh_engine: Callable[[], Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.games.maubinh.port import MauBinh

    real = MauBinh.hidden

    def leaky(self: MauBinh, round_: Any, audience: Any) -> frozenset[Any]:
        return frozenset() if audience.kind == "player" else real(self, round_, audience)

    monkeypatch.setattr(MauBinh, "hidden", leaky)
    caught = first_violation(fresh_engine, 12, **ROOMS_ONLY)
    assert caught is not None and "seat" in caught[1] and "before its reveal" in caught[1], caught


def test_experience_points_for_a_player_who_left_are_caught(
    fresh_engine: Callable[[], Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.rounds.models import ExperienceAward
    from services.rounds.tienlen import TienLenAdapter

    def generous(self: TienLenAdapter, service: Any, session: Any, round_: Any, engine: Any) -> None:
        for player in engine.players:  # every seated player, leavers too
            session.add(ExperienceAward(round_id=round_.id, player=player, points=1, awarded_at=service.clock.now()))

    monkeypatch.setattr(TienLenAdapter, "settled", generous)
    caught = first_violation(fresh_engine, 30, **ROOMS_ONLY)
    assert caught is not None and "experience points" in caught[1], caught


def test_a_room_payout_that_leaves_money_with_the_house_is_caught(
    fresh_engine: Callable[[], Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.games.maubinh.port import MauBinh

    real = MauBinh.payouts

    def skimming(self: MauBinh, round_: Any) -> Any:
        found = real(self, round_)
        if found:
            loser = min(found, key=lambda payout: payout.net)
            found = [replace(p, net=p.net - 1) if p is loser else p for p in found]  # one unit more from the loser
        return found

    monkeypatch.setattr(MauBinh, "payouts", skimming)
    caught = first_violation(fresh_engine, 12, **ROOMS_ONLY)
    assert caught is not None and "with the house" in caught[1], caught


# ---- the command ----------------------------------------------------------------------------------


def test_the_command_prints_each_seed_and_a_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["sim", "--seed", "3", "--seeds", "2", "--rounds", "4", "--tables", "1", "--faults", "crash,network"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("seed 3: ") and lines[1].startswith("seed 4: ") and "ok (digest" in lines[0]
    summary = json.loads(lines[-1])
    assert summary["seeds"] == 2 and summary["violations"] == 0 and summary["rounds"] >= 8
    assert set(summary["digests"]) == {"3", "4"}


def test_a_violation_prints_the_seed_the_step_the_trace_and_the_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pokdeng_port.public_view
    monkeypatch.setattr(
        pokdeng_port,
        "public_view",
        lambda round_: real(round_) | {"all": [str(e.card) for e in round_.events if hasattr(e, "face_up")]},
    )
    assert main(["sim", "--seed", "1", "--rounds", "4", "--faults", "none"]) == 1
    out = capsys.readouterr().out
    assert "seed 1: VIOLATION at step " in out and "before its reveal" in out
    assert "reproduce: studio sim --seed 1 --rounds 4 --tables 2 --faults none" in out
    assert json.loads(out.splitlines()[-1])["failed_seeds"] == [1]
