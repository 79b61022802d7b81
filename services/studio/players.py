"""Simulated players for the demo: they bet while betting is open, sometimes insure, and decide
(or let the window run out) — through the same round service the betting API calls."""

from __future__ import annotations

import contextlib
import random
import threading
import uuid
from typing import ClassVar

from services.games.base import FINISHED, GameError
from services.games.pokdeng import SEATS, AwaitingDecision, AwaitingInsurance, Phase, PokDengRound, Side
from services.games.tienlen import cards as tl
from services.games.tienlen.port import TIENLEN
from services.ledger.errors import LedgerError
from services.rounds.adapters import SeatIn
from services.rounds.coups import CoupAdapter
from services.rounds.engines import load
from services.rounds.errors import RoundError
from services.rounds.maubinh import ArrangeIn, ReadyIn
from services.rounds.models import Round
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.tienlen import PassIn, PlayIn
from services.studio.assembly import RunningStudio

NAMES = ("ana", "binh", "chai", "dao", "emi", "farid")


class Simulated:
    """Players of one game's tables: funded once, then acting on each change of a round of that game."""

    game: str  # the game whose tables these players play (a class's, or one instance's)
    names: ClassVar[tuple[str, ...]]

    def __init__(self, studio: RunningStudio, seed: int = 0, bankroll: int = 100_000) -> None:
        self.studio = studio
        self.rng = random.Random(seed)
        self._done: set[tuple[str, ...]] = set()
        self._seen: dict[str, tuple[str, int]] = {}  # table -> the round and log length last looked at
        for name in self.names:
            with contextlib.suppress(RoundError):  # already there from an earlier run of the same studio
                studio.players.register(name)
            studio.wallets.deposit(name, bankroll, key=f"demo-fund-{name}-{uuid.uuid4().hex}", actor="demo")

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(0.1):
            for table_id, table in self.studio.controller.tables.items():
                current = table.current
                if current is None or current.phase in FINISHED or current.game != self.game:
                    continue
                if self._seen.get(table_id) == (current.round_id, current.log_length):
                    continue
                self._seen[table_id] = (current.round_id, current.log_length)
                with contextlib.suppress(RoundError, GameError, LedgerError):  # a window closed: as in life
                    self.act(table_id, current.round_id, current.phase)

    def act(self, table_id: str, round_id: str, phase: str) -> None:
        raise NotImplementedError

    def _once(self, *key: str) -> bool:
        if key in self._done:
            return False
        self._done.add(key)
        return True


class SimulatedPlayers(Simulated):
    """Pok Deng players."""

    game = "pokdeng"
    names = NAMES

    def act(self, table_id: str, round_id: str, phase: str) -> None:
        self._play(round_id, phase, pokdeng(self.studio.service).round(round_id))

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


ROOM_NAMES = ("gia", "huy", "kim", "lan")


class SimulatedRoomPlayers(Simulated):
    """Mậu Binh room players for the demo: two to four sit and say they are ready; in arranging most submit the
    suggested arrangement and the rest let the time run out (the room auto-arranges for them). Through the same
    round service actions the API calls."""

    game = "maubinh"
    names = ROOM_NAMES

    def act(self, table_id: str, round_id: str, phase: str) -> None:
        service, rng = self.studio.service, self.rng
        if phase == "seating" and self._once(round_id, "seated"):
            players = rng.sample(ROOM_NAMES, rng.randint(2, len(ROOM_NAMES)))
            for number, name in enumerate(players, start=1):
                service.act(name, round_id, "sit", SeatIn(seat=str(number)), uuid.uuid4().hex)
            for name in players:
                service.act(name, round_id, "ready", ReadyIn(), None)
        elif phase == "arranging" and self._once(round_id, "arranged"):
            for seat, name in service.seats(round_id).items():
                if rng.random() < 0.75:  # the rest run out of time: auto-arranged
                    chi1, chi2, chi3 = service.seat_view(table_id, seat, name)["suggestion"]["chi"]
                    service.act(name, round_id, "arrange", ArrangeIn(chi1=chi1, chi2=chi2, chi3=chi3), None)


TIENLEN_NAMES = ("mai", "nam", "oanh", "phuc")


class SimulatedTienLenPlayers(Simulated):
    """Tiến Lên room players for the demo: two to four sit; the player to act plays a random legal move (or passes
    when nothing beats the table), and now and then lets the turn run out. Through the round service's actions."""

    game = "tienlen"
    names = TIENLEN_NAMES

    def act(self, table_id: str, round_id: str, phase: str) -> None:
        service, rng = self.studio.service, self.rng
        if phase == "seating" and self._once(round_id, "seated"):
            players = rng.sample(TIENLEN_NAMES, rng.randint(2, len(TIENLEN_NAMES)))
            for number, name in enumerate(players, start=1):
                service.act(name, round_id, "sit", SeatIn(seat=str(number)), uuid.uuid4().hex)
        elif phase == "playing":
            with service.sessions() as session:
                round_ = session.get(Round, round_id)
                room = load(session, round_, TIENLEN) if round_ is not None else None
            engine = room.engine if room is not None else None
            if engine is None or engine.to_act is None or rng.random() < 0.1:  # the rest: the turn runs out
                return
            player = engine.to_act
            moves = engine.legal_moves(player)
            if moves:
                lowest = min(moves, key=lambda m: (len(m.cards), max(m.cards)))
                move = lowest if rng.random() < 0.7 else rng.choice(moves)
                service.act(player, round_id, "play", PlayIn(cards=tl.codes(sorted(move.cards))), None)
            else:
                service.act(player, round_id, "pass", PassIn(), None)


COUP_NAMES = ("gus", "hana", "ivo", "jun", "kai")


class SimulatedCoupBettors(Simulated):
    """Bettors at the house's coup tables (baccarat, Dragon Tiger): while betting is open most put a chip or two on a
    side, and now and then on the tie or a side bet — through the same ``bets`` action the API calls."""

    names = COUP_NAMES

    def __init__(self, studio: RunningStudio, game: str, seed: int = 0, bankroll: int = 100_000) -> None:
        self.game = game  # one instance per coup game
        adapter = studio.service.games.adapter(game)
        assert isinstance(adapter, CoupAdapter), game
        self.adapter = adapter
        super().__init__(studio, seed, bankroll)

    def act(self, table_id: str, round_id: str, phase: str) -> None:
        if phase != "betting" or not self._once(round_id, "bets"):
            return
        rng, game = self.rng, self.adapter.game
        body = next(action.body for action in self.adapter.actions if action.name == "bets")
        for name in rng.sample(COUP_NAMES, rng.randint(2, len(COUP_NAMES))):
            bets = [{"side": rng.choice(game.sides), "stake": rng.choice((100, 200, 500, 1_000))}]
            if rng.random() < 0.25:
                extra = [spot for spot in game.spots if spot not in game.opposite]
                bets.append({"side": rng.choice(extra), "stake": 100})
            self.studio.service.act(name, round_id, "bets", body.model_validate({"bets": bets}), uuid.uuid4().hex)
