"""The players of a simulated room (Mậu Binh, Tiến Lên): they take seats, say they are ready, arrange their chi or
play their turns — through the round service's actions, as the API runs them — and now and then leave, never get
ready, let their time run out, send a play the rules refuse or a binh lủng arrangement without confirming it.

Each reacts to the room's public state after a human delay and reads only what a player may: their own seat's view
(checked for the other hands, which no player may see before the round shows them) and, to find a legal play, what
their hand allows against the table."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy.exc import DBAPIError

from services.games.base import FINISHED
from services.games.tienlen import cards as tl
from services.rounds.models import Round
from services.sim.actors import Players, Request

if TYPE_CHECKING:
    from services.sim.world import Simulation

SEATS: Final = ("1", "2", "3", "4")
ROOMS: Final[dict[str, dict[str, Any]]] = {  # the rooms' settings (each room adds how it is dealt)
    # unit 15: a seat holds 810 per other player, so a 2,000 wallet covers a hand of three but not of four
    "maubinh": {"unit": 15, "ready_ms": 4_000, "arranging_ms": 8_000, "showdown_ms": 400},
    "tienlen": {"unit": 15, "hold_units": 80, "seating_ms": 3_000, "turn_ms": 3_000},
}
FUNDS: Final = (2_000, 20_000, 100_000)  # what a room's players deposit (and a broke one tops up to)


def room_deal(number: int, seed: int) -> str:
    """How a seed's ``number``-th room of a game is dealt: from the shoe or online (a committed server shuffle), in
    turn — a seed's first rooms alternate between the two from one seed to the next."""
    return "shoe" if (number + seed) % 2 else "online"


class RoomPlayers(Players):
    """A room's players: seats (two at least, so a hand can start), the ready check, the chi or the turns."""

    def __init__(self, sim: Simulation, table: str, names: list[str]) -> None:
        super().__init__(sim, table, names)
        self.game = sim.games[table]
        self._acted: set[tuple[str, ...]] = set()  # (round, what, who): each reaction once
        self._seating: dict[str, int] = {}  # round -> newcomers sent to sit

    def on_view(self, view: dict[str, Any]) -> None:
        round_id, phase = str(view.get("round_id")), str(view.get("phase"))
        if view.get("round_id") is None or phase in FINISHED:
            return
        if len(self._acted) > 512:
            self._acted = {item for item in self._acted if item[0] == round_id}
        if phase == "seating":
            self._seating_view(round_id, view)
        elif phase == "arranging":
            for seat, name in self._seated(round_id).items():
                self._once(round_id, "arrange", name, lambda s=seat, n=name: self._arrange(round_id, s, n))
        elif phase == "playing" and view.get("turn"):
            player = self._seated(round_id).get(str(view["turn"]))
            moment = str(view.get("table")) + str(view.get("passed"))
            if player is not None:
                self._once(round_id, f"turn {view['turn']} {moment}", player, lambda: self._turn(round_id, player))

    # ---- seats ---------------------------------------------------------------------------

    def _seating_view(self, round_id: str, view: dict[str, Any]) -> None:
        """Enough players sit for a hand to start (two), and at a round's first view a few more come."""
        taken, pending = len(view.get("seats") or []), self._seating.get(round_id, 0)
        crowd = self.rng.randint(0, 2) if (round_id, "crowd", "") not in self._acted else 0
        self._acted.add((round_id, "crowd", ""))
        for _ in range(max(0, 2 - taken - pending) + crowd):
            self._seating[round_id] = self._seating.get(round_id, 0) + 1
            self.sim.later(self.rng.uniform(50, 1_500), f"{self.table} newcomer sits", partial(self._sit, round_id),
                           self.table)  # fmt: skip

    def _sit(self, round_id: str) -> None:
        self._seating[round_id] = max(0, self._seating.get(round_id, 0) - 1)
        if self._phase(round_id) != "seating":
            return
        taken = self._seated(round_id)
        waiting = [name for name in self.names if name not in taken.values()]
        if not waiting:
            return
        name = self.rng.choice(waiting)
        self._fund(name)
        free = [seat for seat in SEATS if seat not in taken] or list(SEATS)  # all taken: refused (seat_taken)
        self.send(Request(name, round_id, "sit", {"seat": self.rng.choice(free)}, self.sim.key()))
        if name not in self._seated(round_id).values():
            return
        if self.sim.fault("leave", 0.05):  # changes their mind before the deal: the hold comes back
            self.sim.later(self.rng.uniform(100, 2_000), f"{name} leaves before the deal",
                           partial(self._send, name, round_id, "leave", {}), self.table)  # fmt: skip
        elif self.game == "maubinh" and not self._kicked(round_id):
            self.sim.later(self.rng.uniform(100, 3_000), f"{name} is ready",
                           partial(self._send, name, round_id, "ready", {}), self.table)  # fmt: skip

    def _kicked(self, round_id: str) -> bool:
        """One seated player a round, now and then, is never ready: the ready check removes them."""
        if (round_id, "kick", "") in self._acted or not self.sim.fault("kick", 0.05):
            return False
        self._acted.add((round_id, "kick", ""))
        return True

    def _fund(self, name: str) -> None:
        """A player whose wallet could not cover a seat deposits again (as a broke player would at the cashier)."""
        try:
            if self.sim.wallets.balance(name)["balance"] < FUNDS[0]:
                self.sim.wallets.deposit(name, self.rng.choice(FUNDS), self.sim.key(), "sim")
                self.sim.count("room_deposits")
        except DBAPIError:
            self.sim.count("answered_503")

    # ---- Mậu Binh ------------------------------------------------------------------------

    def _arrange(self, round_id: str, seat: str, name: str) -> None:
        if self.sim.fault("leave", 0.04):
            self._send(name, round_id, "leave", {})
            return
        if self.rng.random() < 0.1:
            return  # time runs out: the room arranges for them
        own = self.sim.seat_view(self.table, seat, name)
        suggestion = (own.get("suggestion") or {}).get("chi")
        if not suggestion:
            return
        chi1, chi2, chi3 = suggestion
        if self.rng.random() < 0.1:  # chi 1 and chi 2 swapped: binh lủng, refused unless confirmed
            self._send(name, round_id, "arrange", {"chi1": chi2, "chi2": chi1, "chi3": chi3})
            chi1, chi2 = chi2, chi1
            if self.rng.random() < 0.5:
                return
            confirmed = {"chi1": chi1, "chi2": chi2, "chi3": chi3, "confirm_binh_lung": True}
            self.sim.later(self.rng.uniform(200, 2_000), f"{name} confirms a binh lủng arrangement",
                           partial(self._send, name, round_id, "arrange", confirmed), self.table)  # fmt: skip
            return
        self._send(name, round_id, "arrange", {"chi1": chi1, "chi2": chi2, "chi3": chi3})

    # ---- Tiến Lên ------------------------------------------------------------------------

    def _turn(self, round_id: str, name: str) -> None:
        """The player to act, after a moment's thought: a legal play (mostly their lowest), a pass when nothing beats
        the table, now and then a play the rules refuse, a turn left to run out, or leaving the round."""
        turn_ms = ROOMS["tienlen"]["turn_ms"]
        if self.rng.random() < 0.12:
            return  # the turn runs out: the room passes or leads for them (three in a row: they are taken out)
        at = self.rng.uniform(100, turn_ms * 0.9)
        self.sim.later(at, f"{name} plays", partial(self._play, round_id, name), self.table)

    def _play(self, round_id: str, name: str) -> None:
        if self.sim.fault("leave", 0.02):
            self._send(name, round_id, "leave", {})
            return
        seat = next((s for s, p in self._seated(round_id).items() if p == name), None)
        moves = self._legal(round_id, name)
        if seat is None or moves is None:
            return
        own = self.sim.seat_view(self.table, seat, name)  # their hand, as their page shows it
        hand = [code for code in ((own.get("hands") or {}).get(seat) or {}).get("cards", []) if code]
        if hand and self.rng.random() < 0.05:  # two cards that make nothing, or a card not theirs: refused
            self._send(name, round_id, "play", {"cards": self.rng.sample(hand, min(2, len(hand)))})
            return
        if not moves:
            self._send(name, round_id, "pass", {})
            return
        lowest = min(moves, key=lambda move: (len(move), max(tl.parse(move))))
        self._send(name, round_id, "play", {"cards": lowest if self.rng.random() < 0.7 else self.rng.choice(moves)})

    def _legal(self, round_id: str, name: str) -> list[list[str]] | None:
        """The plays ``name`` may make now (None: not theirs to make, or the database failed)."""
        try:
            with self.sim.api.sessions() as session:
                round_ = session.get(Round, round_id)
                if round_ is None:
                    return None
                with self.sim.api.reading(session, round_) as room:
                    engine = room.engine
                    if engine is None or engine.to_act != name:
                        return None
                    return [tl.codes(sorted(move.cards)) for move in engine.legal_moves(name)]
        except DBAPIError:
            self.sim.count("answered_503")
            return None

    # ---- reading the room ----------------------------------------------------------------

    def _seated(self, round_id: str) -> dict[str, str]:
        """Seat -> player of the round, as the API says."""
        try:
            return self.sim.api.seats(round_id)
        except DBAPIError:
            self.sim.count("answered_503")
            return {}

    def _phase(self, round_id: str) -> str:
        latest = self.sim.latest_view(self.table)
        return str(latest.get("phase")) if str(latest.get("round_id")) == round_id else ""

    def _once(self, round_id: str, what: str, name: str, act: Any) -> None:
        key = (round_id, what, name)
        if key not in self._acted:
            self._acted.add(key)
            act()

    def _send(self, name: str, round_id: str, action: str, body: dict[str, Any]) -> None:
        self.send(Request(name, round_id, action, body, None))
