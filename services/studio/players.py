"""Simulated players for the demo: they bet while betting is open, sometimes insure, and decide
(or let the window run out) — through the same round service the betting API calls."""

from __future__ import annotations

import contextlib
import random
import threading
import uuid

from services.games.base import FINISHED, GameError
from services.games.pokdeng import SEATS, AwaitingDecision, AwaitingInsurance, Phase, PokDengRound, Side
from services.ledger.errors import LedgerError
from services.rounds.errors import RoundError
from services.rounds.pokdeng import Bet, pokdeng
from services.studio.assembly import RunningStudio

NAMES = ("ana", "binh", "chai", "dao", "emi", "farid")


class SimulatedPlayers:
    def __init__(self, studio: RunningStudio, seed: int = 0, bankroll: int = 100_000) -> None:
        self.studio = studio
        self.rng = random.Random(seed)
        self._done: set[tuple[str, ...]] = set()
        self._seen: dict[str, tuple[str, int]] = {}  # table -> the round and log length last looked at
        for name in NAMES:
            with contextlib.suppress(RoundError):  # already there from an earlier run of the same studio
                studio.players.register(name)
            studio.wallets.deposit(name, bankroll, key=f"demo-fund-{name}-{uuid.uuid4().hex}", actor="demo")

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(0.1):
            for table_id, table in self.studio.controller.tables.items():
                current = table.current
                if current is None or current.phase in FINISHED or current.game != "pokdeng":
                    continue
                if self._seen.get(table_id) == (current.round_id, current.log_length):
                    continue
                self._seen[table_id] = (current.round_id, current.log_length)
                with contextlib.suppress(RoundError, GameError, LedgerError):  # a window closed: as in life
                    self._play(current.round_id, current.phase, pokdeng(self.studio.service).round(current.round_id))

    def _once(self, *key: str) -> bool:
        if key in self._done:
            return False
        self._done.add(key)
        return True

    def _play(self, round_id: str, phase: str, engine: PokDengRound) -> None:
        service, rng = pokdeng(self.studio.service), self.rng
        expecting = engine.expecting
        if phase == Phase.BETTING and self._once(round_id, "bets"):
            for name in rng.sample(NAMES, rng.randint(2, len(NAMES))):
                side = rng.choice(list(Side))
                bets = [Bet(side, seat, rng.choice((10, 20, 50, 100))) for seat in rng.sample(SEATS, rng.randint(1, 3))]
                service.place_bets(name, round_id, bets, key=uuid.uuid4().hex)
        elif isinstance(expecting, AwaitingInsurance) and self._once(round_id, "insurance"):
            for name in expecting.eligible:
                amounts = engine.insurance_amounts(name)
                if amounts and rng.random() < 0.4:
                    service.buy_insurance(name, round_id, rng.choice(amounts), key=uuid.uuid4().hex)
        elif isinstance(expecting, AwaitingDecision) and self._once(round_id, "decide", str(expecting.seat)):
            self._decide(round_id, expecting)

    def _decide(self, round_id: str, expecting: AwaitingDecision) -> None:
        """Most deciders choose; the rest let the window run out (their threshold decides)."""
        if expecting.decider in NAMES and self.rng.random() < 0.7:
            draw = expecting.points <= self.rng.randint(3, 5)
            pokdeng(self.studio.service).decide(expecting.decider, round_id, expecting.seat, draw)
