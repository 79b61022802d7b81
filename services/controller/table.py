"""One table's writer: rounds on time, shoe cards into the round, every refusal recorded and raised.

``TableController`` is driven by three inputs — shoe messages (already de-duplicated and in order,
from ``ShoeFeed``), shoe alarms, and ``tick()`` (the clock) — and changes rounds only through the
``RoundService``, so the controller holds no round logic and no engine of its own, for any game: it
follows what the round expects (a card, a window's deadline, nothing) as the service reports it
after each committed step, with the views the service computed. Its memory is a cache of the
database: ``recover()`` rebuilds it after a restart.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.bus.messages import ShoeAlarm, ShoeCard, ShoeNewDeck
from services.cards import Card, DeckTracker
from services.controller.models import ShoeJournal
from services.db.unit_of_work import run_transaction
from services.games.base import FINISHED, CardWanted, GameError
from services.observability import metrics
from services.rounds.clock import aware
from services.rounds.errors import RoundError
from services.rounds.models import Round
from services.rounds.service import Applied, RoundService

log = logging.getLogger("studio.controller")
DUE = datetime.min.replace(tzinfo=UTC)  # a deadline that has already come
RETRY_AFTER = timedelta(seconds=1)  # after a step failed, before it is tried again
WINDOW_COUNTERS = {"betting": "betting_closed", "decision": "decision_timeouts"}  # counter per window kind
PLAYER_WINDOWS = frozenset({"decision", "turn"})  # windows that wait for one player: their end is a timeout


@dataclass(frozen=True)
class ControllerSettings:
    shoe_id: str  # the only shoe whose cards this table takes
    result_pause_ms: int = 5_000  # results stay on screen this long before the next round opens
    auto_open: bool = True  # open the next round by itself (off: an operator opens rounds)


@dataclass
class Alert:
    kind: str  # refused_card | misread | deck_low | device | controller
    message: str
    at: str
    card: str | None = None


Publish = Callable[[str, dict[str, Any]], None]  # (view name: "state" | "dealer", payload)


@dataclass
class TableController:
    table_id: str
    service: RoundService
    settings: ControllerSettings
    publish: Publish = field(default=lambda _view, _payload: None)
    deck: DeckTracker = field(default_factory=DeckTracker)
    current: Applied | None = None  # the current round as the service last reported it
    alerts: list[Alert] = field(default_factory=list)
    paused: str = ""  # why the deal is stopped (a misread): the next card scanned resumes it
    counters: dict[str, int] = field(default_factory=dict)
    _low_deck_alerted: int = -1  # the deck (by shuffle count) already reported as too low
    _published: dict[str, dict[str, Any]] = field(default_factory=dict)
    _retry_at: datetime | None = None  # after a step failed: not before then
    _last_message: tuple[str, int] = ("", 0)  # (boot, seq) of the last message taken from this table's shoe
    _most_cards: int = 0  # the most cards one round of the table's game takes (read once)

    # ---- inputs -------------------------------------------------------------------------

    def on_shoe(self, message: ShoeCard | ShoeNewDeck) -> None:
        with contextlib.suppress(ValueError):  # a stamp that is not ISO time is the shoe's problem, not ours
            lag = (datetime.now(UTC) - datetime.fromisoformat(message.ts)).total_seconds()
            metrics.RECEIVE_LAG.labels(self.table_id).observe(max(0.0, lag))
        if message.shoe_id != self.settings.shoe_id:
            # a shoe wired to the wrong table: its card may be another table's face-down card, so not named
            what = "a card" if isinstance(message, ShoeCard) else "a new deck"
            self._refuse(message, f"{what} from shoe {message.shoe_id}, not this table's shoe", public_card=False)
            return
        self._last_message = (message.boot_id, message.seq)
        if isinstance(message, ShoeNewDeck):
            self.deck.shuffle()
            self._journal(message, "deck")
            self._count("new_decks")
            self._publish()
            return
        card = Card.from_code(message.card)
        in_round = self.current is not None and card in self.current.cards  # even across a new deck
        if self.deck.has_seen(card) or in_round:
            hidden = card in self._hidden()
            shown = "a face-down card" if hidden else f"card {card}"
            where = "from this deck" if self.deck.has_seen(card) else "in this round (before the new deck)"
            self._refuse(message, f"{shown} was already dealt {where}", public_card=not hidden)
            return
        if message.burn:
            self.deck.record(card)
            self._journal(message, "burn")
            self._count("burn_cards")
            self._publish()
            return
        expecting = self.current.expecting if self.current else None
        if not isinstance(expecting, CardWanted):
            state = self.current.phase if self.current else "no round"
            self._refuse(message, f"card {card} scanned while no card is expected ({state})")
            return
        assert self.current is not None
        try:  # the card and its journal entry commit together: never dealt twice, never lost
            applied = self.service.deal(
                self.current.round_id, card, actor=f"shoe:{message.seq}",
                also=lambda session: session.add(self._journal_entry(message, "dealt")),
            )  # fmt: skip
        except (GameError, RoundError) as error:
            self.refresh()  # this copy was behind the database: the card may be one it had not seen
            if card in self._hidden():
                self._refuse(message, "a face-down card was already dealt in this round", public_card=False)
            else:
                self._refuse(message, str(error))
            return
        except IntegrityError:  # journaled already: a message delivered again after a restart
            log.info("table %s: shoe message %s already journaled", self.table_id, message.seq)
            self.refresh()
            return
        metrics.CARDS.labels(self.table_id, "dealt").inc()
        self.deck.record(card)
        self.paused = ""
        self._count("cards_dealt")
        self._follow(applied)

    def on_untrusted(self, message: ShoeCard | ShoeNewDeck | ShoeAlarm, why: str) -> None:
        """A message in the name of this table's shoe that its keys do not vouch for: never dealt, never obeyed."""
        self._count("untrusted")
        if isinstance(message, ShoeAlarm):
            self._alert("device", f"an alarm in the name of shoe {message.shoe_id} was ignored: {why}")
            self._publish()
            return
        # journaled apart from the shoe's own messages (a forgery must not take the real seq's place), one row
        # per distinct message
        digest = hashlib.sha256(message.model_dump_json().encode()).hexdigest()[:12]
        marked = message.model_copy(update={"boot_id": f"untrusted-{digest}-{message.boot_id}"[:64]})
        what = "a card" if isinstance(message, ShoeCard) else "a new deck"
        self._refuse(marked, f"{what} in the name of shoe {message.shoe_id} refused: {why}", public_card=False)

    def unsigned_shoe(self) -> None:
        """Said once at start: without a key for the shoe, its messages cannot be told from anyone else's."""
        self._alert(
            "controller",
            f"shoe {self.settings.shoe_id} has no signing key here: any client of the broker could deal at this "
            "table (studio shoe-key new)",
        )
        self._publish()

    def on_alarm(self, alarm: ShoeAlarm) -> None:
        if alarm.shoe_id != self.settings.shoe_id:
            self._alert("device", f"{alarm.kind} from shoe {alarm.shoe_id}, not this table's shoe: ignored")
        elif alarm.kind == "misread" and self._rescanned(alarm):
            # alarms and cards travel on different connections: the card after the misread came first.
            # (The shoe's text is not shown: a partial read may be part of a face-down card.)
            self._alert("misread", f"the shoe could not read a card at {alarm.video_tc}; it was scanned again since")
        elif alarm.kind == "misread":
            self.paused = f"misread at {alarm.video_tc}: re-scan the card"
            self._alert("misread", f"the shoe could not read a card at {alarm.video_tc}; deal stopped until re-scanned")
        elif alarm.kind in ("device_alarm", "reader_fault", "invalid_card"):
            self._alert("device", f"{alarm.kind}: {alarm.code} {alarm.text}".strip())
        self._publish()

    def _rescanned(self, alarm: ShoeAlarm) -> bool:
        """A message of this shoe stamped after the alarm was raised has already been taken."""
        boot, seq = self._last_message
        return alarm.after_seq is not None and boot == alarm.boot_id and seq > alarm.after_seq

    def tick(self, now: datetime) -> None:
        """Act on whatever deadline has passed: open a round, or end its open window (betting, a turn…).

        A round moved by someone else (a player, an operator) is seen through ``reread_moved``.
        """
        if self._retry_at is not None and now < self._retry_at:
            return
        current = self.current
        try:
            if current is None or current.phase in FINISHED:
                self._maybe_open(now, current)
            elif current.window_closes_at is not None and now >= aware(current.window_closes_at):
                self._window_ended(current)
        except (GameError, RoundError) as error:
            # someone else moved the round first (a decision, an operator): read it again; if the step
            # still cannot be taken (a table that cannot open a round), do not try again at once
            log.info("table %s: %s; refreshing", self.table_id, error)
            self._retry_at = now + RETRY_AFTER
            self.refresh()

    def _window_ended(self, current: Applied) -> None:
        window = current.expecting
        if window is None or isinstance(window, CardWanted):
            self.refresh()
            return
        applied = self.service.close_window(current.round_id)
        self._count(WINDOW_COUNTERS.get(window.kind, f"{window.kind}_closed"))
        if window.kind in PLAYER_WINDOWS:
            metrics.DECISION_TIMEOUTS.labels(self.table_id).inc()
        self._follow(applied)

    def _maybe_open(self, now: datetime, current: Applied | None) -> None:
        if not self.settings.auto_open:
            return
        pause = timedelta(milliseconds=self.settings.result_pause_ms)
        if current is not None and current.finished_at is not None and now < aware(current.finished_at) + pause:
            return
        if not self.deck.can_deal(self.most_cards()):
            if self._low_deck_alerted != self.deck.shuffles:  # once per deck
                self._low_deck_alerted = self.deck.shuffles
                self._alert("deck_low", f"{self.deck.remaining} cards left: load a new deck before the next round")
                self._publish()
            return
        self.service.open_round(self.table_id)
        self._count("rounds_opened")
        self.refresh()

    # ---- the database -------------------------------------------------------------------

    def recover(self) -> None:
        """Rebuild from the database: the current round, the deck since its last shuffle, where the feed stopped."""
        with self.service.sessions() as session:
            rows = session.execute(
                select(ShoeJournal.kind, ShoeJournal.card, ShoeJournal.disposition)
                .where(ShoeJournal.table_id == self.table_id)
                .order_by(ShoeJournal.id)
            ).all()
        self.deck = DeckTracker()
        for kind, card, disposition in rows:
            if kind == "new_deck" and disposition == "deck":  # not another shoe's, refused
                self.deck.shuffle()
            elif disposition in ("dealt", "burn") and card:
                self.deck.record(Card.from_code(card))
        self.refresh()

    def next_seq(self) -> int | None:
        """The first shoe ``seq`` not yet journaled (None: nothing from this shoe yet)."""
        with self.service.sessions() as session:
            last = session.scalar(
                select(func.max(ShoeJournal.seq)).where(
                    ShoeJournal.table_id == self.table_id, ShoeJournal.shoe_id == self.settings.shoe_id
                )
            )
        return None if last is None else int(last) + 1

    def most_cards(self) -> int:
        if not self._most_cards:
            self._most_cards = self.service.most_cards(self.table_id)
        return self._most_cards

    def refresh(self) -> None:
        """Read the table's latest round again (after a restart, or when someone else moved it)."""
        self._follow(self.service.latest(self.table_id))

    def _follow(self, applied: Applied | None) -> None:
        """Take the round as the service reported it after a committed step (ours or a re-read)."""
        before = (self.current.round_id, self.current.phase) if self.current else None
        if applied is not None and before != (applied.round_id, applied.phase):
            metrics.ROUND_PHASES.labels(self.table_id, applied.phase).inc()
        self.current = None if applied is None else replace(applied, engine=None)  # the service's: not kept
        self._publish()

    def moved(self, latest: tuple[str, int] | None) -> bool:
        """Whether the round in the database (``(round_id, log_length)`` of the latest) is not the one held."""
        held = (self.current.round_id, self.current.log_length) if self.current else None
        return held != latest

    def next_deadline(self) -> datetime | None:
        """When ``tick`` next has something to do (None: nothing timed is pending)."""
        deadline = self._deadline()
        if deadline is None or self._retry_at is None:
            return deadline
        return max(deadline, self._retry_at)

    def _deadline(self) -> datetime | None:
        current = self.current
        if current is None or current.phase in FINISHED:
            if not self.settings.auto_open or not self.deck.can_deal(self.most_cards()):
                return None
            if current is None or current.finished_at is None:
                return DUE
            return aware(current.finished_at) + timedelta(milliseconds=self.settings.result_pause_ms)
        return aware(current.window_closes_at) if current.window_closes_at else None

    def _journal_entry(self, message: ShoeCard | ShoeNewDeck, disposition: str, reason: str = "") -> ShoeJournal:
        card = message.card if isinstance(message, ShoeCard) else None
        return ShoeJournal(
            table_id=self.table_id, shoe_id=message.shoe_id, boot_id=message.boot_id, seq=message.seq,
            kind=message.type, card=card, burn=isinstance(message, ShoeCard) and message.burn,
            disposition=disposition, reason=reason[:500],
            round_id=self.current.round_id if self.current else None, video_tc=message.video_tc,
            received_at=datetime.now(UTC),
        )  # fmt: skip

    def _journal(self, message: ShoeCard | ShoeNewDeck, disposition: str, reason: str = "") -> None:
        metrics.CARDS.labels(self.table_id, disposition).inc()
        entry = self._journal_entry(message, disposition, reason)

        def write(session: Session) -> None:
            self.service.fenced(session, self.table_id)
            session.add(entry)

        try:
            run_transaction(self.service.sessions, write)
        except IntegrityError:
            log.info("table %s: shoe message %s already journaled", self.table_id, message.seq)

    # ---- alerts and views ---------------------------------------------------------------

    def _refuse(self, message: ShoeCard | ShoeNewDeck, reason: str, public_card: bool = True) -> None:
        """Record the refusal (the journal keeps the card) and alert the dealer (naming it only if not hidden)."""
        self._journal(message, "refused", reason)
        self._count("cards_refused")
        self._alert("refused_card", reason, message.card if public_card and isinstance(message, ShoeCard) else None)
        self._publish()

    def _hidden(self) -> frozenset[Card]:
        """Cards of the current round that are dealt but not shown to the public (the engine says which)."""
        return self.current.hidden if self.current is not None else frozenset()

    def _alert(self, kind: str, message: str, card: str | None = None) -> None:
        log.warning("table %s: %s", self.table_id, message, extra=self._context())
        metrics.ALERTS.labels(self.table_id, kind).inc()
        self.alerts = [*self.alerts[-19:], Alert(kind, message, datetime.now(UTC).isoformat(), card)]
        self._count(f"alerts_{kind}")

    def _context(self) -> dict[str, str]:
        """What a log line about this table carries (the JSON log formatter prints it)."""
        return {"table": self.table_id, "round_id": self.current.round_id if self.current else ""}

    def _count(self, name: str) -> None:
        self.counters[name] = self.counters.get(name, 0) + 1

    def _publish(self) -> None:
        """Publish the views that changed since they were last published."""
        for name, view in (("state", self.state_view()), ("dealer", self.dealer_view())):
            if self._published.get(name) != view:
                self._published[name] = view
                self.publish(name, view)

    def state_view(self) -> dict[str, Any]:
        """Public: what anyone may see — never a card before its reveal."""
        current = self.current
        if current is None:
            return {"v": 1, "table_id": self.table_id}
        return current.public

    def dealer_view(self) -> dict[str, Any]:
        """The dealer console: what to deal next, the cards scanned (a face-down one only as received), alerts."""
        current = self.current
        if current is None:
            view: dict[str, Any] = {"v": 1, "table_id": self.table_id}
        else:
            view = current.header | current.views["dealer"]
            expecting = current.expecting
            view.setdefault("waiting_for", expecting.text if expecting else "nothing (the round is over)")
            if isinstance(expecting, CardWanted):
                card = {"position": expecting.position, "index": expecting.index, "face_up": expecting.face_up}
                view.setdefault("next_card", card)
        return view | {
            "deck_remaining": self.deck.remaining,
            "paused": self.paused,
            "alerts": [alert.__dict__ for alert in self.alerts[-10:]],
        }


def reread_moved(service: RoundService, controllers: Mapping[str, TableController]) -> None:
    """Re-read only the tables whose round moved without their controller (one query for all)."""
    latest = latest_rounds(service, list(controllers))
    for table, controller in controllers.items():
        if controller.moved(latest.get(table)):
            controller.refresh()


def latest_rounds(service: RoundService, tables: list[str]) -> dict[str, tuple[str, int]]:
    """Every table's latest round as ``(round_id, log_length)``, in one query."""
    newest = (
        select(Round.table_id, func.max(Round.number).label("number"))
        .where(Round.table_id.in_(tables))
        .group_by(Round.table_id)
        .subquery()
    )
    query = select(Round.table_id, Round.id, Round.log_length).join(
        newest, (Round.table_id == newest.c.table_id) & (Round.number == newest.c.number)
    )
    with service.sessions() as session:
        return {table: (round_id, length) for table, round_id, length in session.execute(query)}
