"""The people of the simulated studio: players and an operator (each table's dealer and camera: ``dealer``).

Each reacts to what its screen shows (the dealer console, the public state, the player's own
view) after a human delay, and calls what the real one calls: the dealer the shoe, the players the
round service's actions (the API's money paths), the operator the void and recalculation tools.
Legal and illegal moves are chosen by the seed; an illegal one must be refused with a clear error
(``REFUSALS``), a database outage answered as the API would (503: the client retries with the same
idempotency key), and anything else is a violation.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import DBAPIError

from services.games.base import FINISHED, GameError
from services.games.pokdeng.port import INSURANCE
from services.journal.models import DECK_HELD
from services.ledger.errors import IdempotencyConflictError, LedgerError
from services.rounds import decks
from services.rounds.checks import MISMATCH, UNSEEN, VERIFYING
from services.rounds.errors import FlowChangedError, RoundError
from services.rounds.proposals import Origin
from services.sim.dealer import deck
from services.sim.runs import Violation

if TYPE_CHECKING:
    from services.sim.world import Simulation

REFUSALS = (GameError, RoundError, LedgerError, ValidationError)  # the API answers these 4xx, with their reason
SEATS = ("A", "B", "C")
SPOTS = {  # a coup game's bets as its simulated players choose them: the sides twice as often
    "baccarat": ("player", "banker", "player", "banker", "tie", "player_pair", "banker_pair"),
    "dragontiger": ("dragon", "tiger", "dragon", "tiger", "tie", "suited_tie"),
}
RETRIES = 6  # a client's retries of one request after 503s


@dataclass
class Request:
    """One money request of a player, sent again with the same key after a 503."""

    player: str
    round_id: str
    action: str
    body: dict[str, Any]
    key: str | None
    tries: int = 0
    first: dict[str, Any] | None = field(default=None)  # the first answer (a retry must get the same)


class Players:
    """A table's players: bets in the window (and some just after it), insurance, draw/stand decisions."""

    def __init__(self, sim: Simulation, table: str, names: list[str]) -> None:
        self.sim, self.table, self.names = sim, table, names
        self.rng = random.Random(sim.rng.random())
        self.round_id = ""
        self._phase_seen: set[tuple[str, str, str]] = set()

    def on_view(self, view: dict[str, Any]) -> None:
        round_id, phase = str(view.get("round_id")), str(view.get("phase"))
        decision = view.get("decision") or {}
        moment = (round_id, phase, str(decision.get("seat", "")))
        if view.get("round_id") is None or moment in self._phase_seen:
            return
        self._phase_seen.add(moment)
        if len(self._phase_seen) > 64:
            self._phase_seen = {moment}
        if phase == "betting":
            self._betting(round_id, view)
        elif phase == "insurance":
            for name in self.names:
                if self.rng.random() < 0.5:
                    self.sim.later(self.rng.uniform(100, 2_500), f"{name} considers insurance",
                                   lambda name=name: self._insurance(name, round_id), self.table)  # type: ignore[misc]  # fmt: skip
        elif decision:
            for name in self.names:
                self.sim.later(self.rng.uniform(50, 600), f"{name} looks at decision {decision['seat']}",
                               lambda name=name: self._decision(name, round_id), self.table)  # type: ignore[misc]  # fmt: skip

    def _betting(self, round_id: str, view: dict[str, Any]) -> None:
        window = self.sim.settings.betting_ms
        for name in self.names:
            for _ in range(self.rng.choice((0, 1, 1, 2))):
                at = self.rng.uniform(0, window)
                if self.sim.fault("race", 0.15):  # right at the close of betting, either side of it
                    at = window + self.rng.uniform(-40, 40)
                self.sim.later(at, f"{name} bets", lambda name=name: self._slip(name, round_id), self.table)  # type: ignore[misc]

    def _slip(self, name: str, round_id: str) -> None:
        bets = []
        coup = SPOTS.get(self.sim.games[self.table])  # a coup game's spots, sides twice (None: Pok Deng)
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            stake = self.rng.choice((10, 20, 50, 100, 200, 500, 1_000, self.rng.randint(1, 3_000)))
            if self.rng.random() < 0.03:
                stake = self.rng.choice((0, -5, 10**16))  # refused by the API's schema
            if coup:  # mostly a side, some ties and side bets; now and then both sides (refused: one side only)
                bets.append({"side": self.rng.choice(coup), "stake": stake})
                continue
            side = "banker" if self.rng.random() < 0.3 else "player"
            bets.append({"side": side, "seat": self.rng.choice(SEATS), "stake": stake})
        self.send(Request(name, round_id, "bets", {"bets": bets}, self.sim.key()))

    def _insurance(self, name: str, round_id: str) -> None:
        mine = self.sim.player_view(self.table, name)
        offer = mine.get("you", {}).get("insurance_offer") or []
        # mostly what the rules allow them; else any amount, refused
        amount = self.rng.choice(offer) if offer and self.rng.random() < 0.9 else self.rng.randint(1, 500)
        self.send(Request(name, round_id, "insurance", {"amount": amount}, self.sim.key()))

    def _decision(self, name: str, round_id: str) -> None:
        mine = self.sim.player_view(self.table, name)
        decision = mine.get("you", {}).get("decision")
        if decision is None:
            if self.rng.random() < 0.05:  # someone else's decision: refused
                body = {"seat": self.rng.choice(SEATS), "choice": "draw"}
                self.send(Request(name, round_id, "decisions", body, None))
            return
        if self.sim.fault("disconnect", 0.2):
            return  # gone: the window runs out and the threshold decides
        body = {"seat": decision["seat"], "choice": self.rng.choice(("draw", "stand"))}
        late = self.sim.settings.decision_ms * self.rng.uniform(0.9, 1.2)
        self.sim.later(self.rng.uniform(100, late), f"{name} decides {body['choice']}",
                       lambda: self.send(Request(name, round_id, "decisions", body, None)), self.table)  # fmt: skip

    def body(self, action: str) -> type[BaseModel]:
        """The request body of ``action`` at this table's game, as the API reads it."""
        return next(each.body for each in self.sim.api.games.adapter(self.sim.games[self.table]).actions
                    if each.name == action)  # fmt: skip

    def send(self, request: Request) -> None:
        """The request as the API runs it; a 503 is retried with the same key, a retry must match the first."""
        sim = self.sim
        request.tries += 1
        try:
            body = self.body(request.action).model_validate(request.body)
            answer = sim.api.act(request.player, request.round_id, request.action, body, request.key)
        except REFUSALS as refusal:
            sim.count(f"refused_{getattr(refusal, 'code', 'invalid_body')}")
            if request.first is not None and not isinstance(refusal, ValidationError):
                raise Violation(
                    f"{request.player}'s retry of an accepted {request.action} was refused: {refusal}"
                ) from None
            return
        except DBAPIError:
            sim.count("answered_503")
            if request.tries < RETRIES:
                sim.later(self.rng.uniform(200, 1_000), f"{request.player} retries {request.action}",
                          lambda: self.send(request), self.table)  # fmt: skip
            return
        out = answer.model_dump() if isinstance(answer, BaseModel) else dict(answer)
        sim.count(f"accepted_{request.action}")
        if request.first is not None and out != request.first:
            raise Violation(
                f"{request.player}'s retry with key {request.key} got another answer: {out} ≠ {request.first}"
            )
        request.first = out
        self._accepted(request, out)
        sim.changed(self.table)
        if request.key is not None and sim.fault("retry", 0.1):
            self._retry(request)

    def _retry(self, request: Request) -> None:
        """A client that never saw the answer sends it again (same key); or reuses the key for another request."""
        if self.rng.random() < 0.7:
            self.sim.later(self.rng.uniform(10, 3_000), f"{request.player} sends {request.action} again (same key)",
                           lambda: self.send(request), self.table)  # fmt: skip
            return
        bet = {"side": "tie", "stake": 13} if self.sim.games[self.table] in SPOTS else {
            "side": "player", "seat": "A", "stake": 13}  # fmt: skip
        another: dict[str, dict[str, Any]] = {
            "insurance": {"amount": 7},
            "sit": {"seat": "4" if request.body.get("seat") != "4" else "1"},
        }
        other = dict(request.body, **another.get(request.action, {"bets": [bet]}))
        self.sim.later(self.rng.uniform(10, 1_000), f"{request.player} reuses a key for another {request.action}",
                       lambda: self._conflict(Request(request.player, request.round_id, request.action, other,
                                                      request.key)), self.table)  # fmt: skip

    def _conflict(self, request: Request) -> None:
        sim = self.sim
        try:
            body = self.body(request.action).model_validate(request.body)
            sim.api.act(request.player, request.round_id, request.action, body, request.key)
        except IdempotencyConflictError:
            sim.count("refused_idempotency_conflict")
            return
        except DBAPIError:
            sim.count("answered_503")
            return
        raise Violation(f"{request.player} reused key {request.key} for another {request.action}, and it was accepted")

    def _accepted(self, request: Request, out: dict[str, Any]) -> None:
        accepted = self.sim.checker.accepted[request.round_id]
        if request.action == "bets":
            for wager in out["wagers"]:
                # a retry's answer is the stake as it was then: a later slip may have raised it since
                accepted.stakes[wager["wager_id"]] = max(wager["stake"], accepted.stakes.get(wager["wager_id"], 0))
                accepted.wagers.add(wager["wager_id"])
        elif request.action == "insurance":
            accepted.stakes[INSURANCE + request.player] = out["insurance"]


class Operator:
    """Voids rounds (settled or not) and corrects settled rounds' cards, as the operator tools do."""

    def __init__(self, sim: Simulation) -> None:
        self.sim, self.rng = sim, random.Random(sim.rng.random())
        self._counting: set[str] = set()  # tables whose deck the pit boss is counting
        self._confirming: set[tuple[str, int]] = set()  # cards whose check an operator is looking at

    def deck_held(self, table: str) -> None:
        """A table held by a deck not whole: the pit boss counts the cards, then acknowledges its report."""
        if table in self._counting:
            return
        self._counting.add(table)
        self.sim.later(self.rng.uniform(5_000, 60_000), f"pit boss counts {table}'s deck",
                       lambda: self._acknowledge(table), table)  # fmt: skip

    def _acknowledge(self, table: str) -> None:
        self._counting.discard(table)
        origin = Origin("sim-operator", "sim")
        try:
            for report in decks.reports(self.sim.api, decks.DecksQuery(table=table, status=DECK_HELD)):
                decks.acknowledge(self.sim.api, report["id"], "counted: as the report says", origin)
                self.sim.count("decks_acknowledged")
        except DBAPIError:  # the database failed the request: the pit boss tries again
            self.sim.count("answered_503")
            self.deck_held(table)
            return
        self.sim.changed(table)

    def on_view(self, table: str, view: dict[str, Any]) -> None:
        round_id, phase = view.get("round_id"), view.get("phase")
        if round_id is None or not self.sim.faults_on("operator"):
            return
        if phase == "settled" and self.rng.random() < 0.05:
            self.sim.later(self.rng.uniform(1_000, 20_000), f"operator corrects {round_id}",
                           lambda: self._correct(str(round_id)), table)  # fmt: skip
        elif phase == "settled" and self.rng.random() < 0.03:
            self._void_later(table, str(round_id), "video shows a dealing error")
        elif phase not in FINISHED and self.rng.random() < 0.005:
            self._void_later(table, str(round_id), "table incident")

    def on_checks(self, table: str, view: dict[str, Any]) -> None:
        """A round held for the camera's checks: the operator watches the video and says which read is right."""
        if view.get("phase") != VERIFYING:
            return
        round_id = str(view.get("round_id"))
        for check in view.get("checks", []):
            key = (round_id, int(check["position"]))
            if check["status"] in (MISMATCH, UNSEEN) and key not in self._confirming:
                self._confirming.add(key)
                self.sim.later(self.rng.uniform(2_000, 20_000), f"operator checks card {key[1]} of {round_id}",
                               partial(self._confirm, table, round_id, check), table)  # fmt: skip

    def _confirm(self, table: str, round_id: str, check: dict[str, Any]) -> None:
        position = int(check["position"])
        read = "camera" if check.get("camera_card") and self.rng.random() < 0.3 else "shoe"
        try:
            self.sim.api.confirm_read(round_id, position, read, "sim-operator", f"the video shows the {read}'s card")
        except FlowChangedError:  # the camera's card would have changed the deal: the round is voided
            self.sim.count("checks_flow_changed")
            self._void_held(table, round_id)
            return
        except REFUSALS as refusal:
            self.sim.count(f"operator_refused_{getattr(refusal, 'code', 'invalid')}")
            return
        except DBAPIError:  # the request failed: the operator tries again
            self.sim.count("answered_503")
            self.sim.later(1_000, f"operator checks card {position} of {round_id} again",
                           lambda: self._confirm(table, round_id, check), table)  # fmt: skip
            return
        self.sim.count(f"checks_confirmed_{read}")
        self.sim.changed(table)

    def _void_held(self, table: str, round_id: str) -> None:
        """A held round whose cards cannot be settled as read is voided — until it is (a 503 is asked again)."""
        try:
            self.sim.api.void(round_id, "shoe and camera disagree", "sim-operator")
        except REFUSALS as refusal:
            self.sim.count(f"operator_refused_{getattr(refusal, 'code', 'invalid')}")
            return
        except DBAPIError:
            self.sim.count("answered_503")
            self.sim.later(1_000, f"operator voids {round_id} again", partial(self._void_held, table, round_id), table)
            return
        self.sim.count("operator_done")
        self.sim.changed(table)

    def _void_later(self, table: str, round_id: str, reason: str) -> None:
        void = lambda: self.sim.api.void(round_id, reason, "sim-operator")  # noqa: E731
        self.sim.later(
            self.rng.uniform(100, 5_000), f"operator voids {round_id}", lambda: self._try(void, table), table
        )

    def _correct(self, round_id: str) -> None:
        view = self.sim.round_cards(round_id)
        if not view:
            return
        index = self.rng.randrange(len(view))
        others = [card for card in deck(self.rng) if str(card) not in view]
        if not others:  # the whole deck is in the round (a room): no card to put in its place
            return
        cards = {index: others[0]}
        self.sim.checker.roads.pop(round_id, None)  # its roads as shown before the correction are not its roads now
        self._try(lambda: self.sim.api.recalculate(round_id, cards, "sim-video", "sim-operator"), "")

    def _try(self, action: Callable[[], Any], table: str) -> None:
        try:
            action()
        except REFUSALS as refusal:
            self.sim.count(f"operator_refused_{getattr(refusal, 'code', 'invalid')}")
            return
        except DBAPIError:
            self.sim.count("answered_503")
            return
        self.sim.count("operator_done")
        if table:
            self.sim.changed(table)


def new_key(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128)))
