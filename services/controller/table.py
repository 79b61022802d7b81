"""One table's writer: rounds on time, shoe cards into the round, every refusal recorded and raised.

``TableController`` is driven by three inputs — shoe messages (already de-duplicated and in order,
from ``ShoeFeed``), shoe alarms, and ``tick()`` (the clock) — and changes rounds only through the
``RoundService``, so the controller holds no round logic and no engine of its own, for any game: it
follows what the round expects (a card, a window's deadline, nothing) as the service reports it
after each committed step, with the views the service computed. Its memory is a cache of the
database: ``recover()`` rebuilds it after a restart, and ``feed_start()`` says where the shoe's feed
resumes (its last run and seq, the newest stamp taken).

No message of the shoe is dropped in silence: one refused (out of turn, a forgery, a message the
feed will not place in the shoe's sequence) is journaled with why and raised; only a message already
journaled, delivered again, is just counted. A new run of the shoe numbered from where it had been (a
daemon that lost its outbox) is said on the console. Once the console has asked for the rest of a low
deck as burns, the cards that come before the new deck, between rounds, are those burns.

The controller keeps the dispatch and the timers; its parts live beside it: the journal's reads and writes in
``services.journal.table``, the deck's reconciliation and hold in ``deckwatch``, the camera's cross-check in
``crosscheck``, the burn at a new shoe in ``shoestart``, and what the console shows in ``console``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError

from services.bus.feed import FeedStart
from services.bus.messages import ShoeAlarm, ShoeCard, ShoeCutCard, ShoeMessage, ShoeNewDeck
from services.cards import Card, DeckTracker
from services.controller.console import ALERTS_KEPT, Alert, Desk, dealer_view, state_view
from services.controller.crosscheck import CrossCheck
from services.controller.deckwatch import DeckWatch
from services.controller.parts import described
from services.controller.shoestart import ShoeStart
from services.controller.witness import Witness
from services.games.base import FINISHED, CardWanted, GameError
from services.journal.table import UNTRUSTED, TableJournal
from services.observability import metrics
from services.rounds.clock import aware
from services.rounds.errors import RoundError
from services.rounds.service import Applied, RoundService

log = logging.getLogger("studio.controller")
DUE = datetime.min.replace(tzinfo=UTC)  # a deadline that has already come
RETRY_AFTER = timedelta(seconds=1)  # after a step failed, before it is tried again
WINDOW_COUNTERS = {"betting": "betting_closed", "decision": "decision_timeouts"}  # counter per window kind
HOLD_RECHECK = timedelta(seconds=2)  # while a deck report holds the table: how often to look for the operator's word
PLAYER_WINDOWS = frozenset({"decision", "turn"})  # windows that wait for one player: their end is a timeout


@dataclass(frozen=True)
class ControllerSettings:
    shoe_id: str  # the only shoe whose cards this table takes
    camera_id: str = ""  # the only overhead camera whose sightings check the shoe's cards (none: nothing is checked)
    result_pause_ms: int = 7_000  # results stay up this long before the next round opens (unless the table says)
    auto_open: bool = True  # open the next round by itself (off: an operator opens rounds)


Publish = Callable[[str, dict[str, Any]], None]  # (view name: "state" | "dealer", payload)


@dataclass
class TableController(CrossCheck, DeckWatch, ShoeStart):
    table_id: str
    service: RoundService
    settings: ControllerSettings
    publish: Publish = field(default=lambda _view, _payload: None)
    deck: DeckTracker = field(default_factory=DeckTracker)
    current: Applied | None = None  # the current round as the service last reported it
    alerts: list[Alert] = field(default_factory=list)
    paused: str = ""  # why the deal is stopped (a misread): the next card scanned resumes it
    held: int | None = None  # the deck report that holds the table (a deck not whole) until an operator acknowledges
    held_why: str = ""
    counters: dict[str, int] = field(default_factory=dict)
    _low_deck_alerted: int = -1  # the deck (by shuffle count) already reported as too low
    _published: dict[str, dict[str, Any]] = field(default_factory=dict)
    _retry_at: datetime | None = None  # after a step failed: not before then
    _last_message: tuple[str, int] = ("", 0)  # (boot, seq) of the last message taken from this table's shoe
    _journal_read: int = 0  # the newest journal row this copy knows of: a card entered by hand after it is news
    _most_cards: int | None = None  # the most cards one round of the table's game takes (read once; 0: online)
    burn_left: int | None = None  # cards still to burn at the new shoe (``shoestart``)
    burn_of: int = 0
    cut: bool = False  # the shoe's cut card came out (``shoestart``)
    cut_round: str | None = None
    cut_after: str | None = None
    _shoe_end_said: bool = False
    camera: Witness = field(default_factory=Witness)  # the overhead camera's recent sightings
    camera_state: str = "unknown"  # online | offline, as the camera's daemon last said
    journal: TableJournal = field(init=False)

    def __post_init__(self) -> None:
        self.journal = TableJournal(self.service.sessions, self.table_id, self.settings.shoe_id)

    # ---- inputs -------------------------------------------------------------------------

    def on_shoe(self, message: ShoeMessage) -> None:
        with contextlib.suppress(ValueError):  # a stamp that is not ISO time is the shoe's problem, not ours
            lag = (self.service.clock.now() - datetime.fromisoformat(message.ts)).total_seconds()
            metrics.RECEIVE_LAG.labels(self.table_id).observe(max(0.0, lag))
        if message.shoe_id != self.settings.shoe_id:
            # a shoe wired to the wrong table: its card may be another table's face-down card, so not named
            what = described(message)
            self._refuse(message, f"{what} from shoe {message.shoe_id}, not this table's shoe", "wrong_shoe", False)
            return
        last_boot, last_seq = self._last_message
        if last_boot and message.boot_id != last_boot and message.seq <= last_seq:
            # the feed took a new run of the shoe numbered from where it had been: a daemon that lost its outbox
            self._count("shoe_restarts")
            self._alert("shoe_restarted", f"shoe {message.shoe_id} restarted; its sequence starts again")
            self._publish()
        self._last_message = (message.boot_id, message.seq)
        if isinstance(message, ShoeNewDeck):
            if self._new_deck(message):
                self._shoe_opened()
                self._publish()
            return
        if isinstance(message, ShoeCutCard):
            self._cut_card(message)
            return
        card = Card.from_code(message.card)
        # one deck: a card in the round cannot come again, even across a new deck; a shoe of several holds copies
        in_round = self.deck.decks == 1 and self.current is not None and card in self.current.cards
        if not self.deck.can_take(card) or in_round:
            hidden = card in self._hidden()
            shown = "a face-down card" if hidden else f"card {card}"
            spent = " from this deck" if self.deck.decks == 1 else f" {self.deck.decks} times from this shoe"
            where = spent if not self.deck.can_take(card) else " in this round (before the new deck)"
            if self._refuse(message, f"{shown} was already dealt{where}", "already_dealt", public_card=not hidden):
                self.deck.note_refused(card)
            return
        if self._burn_at_start(message, card):
            return
        if message.burn:
            self.deck.record(card)
            self._journal(message, "burn")
            self._count("burn_cards")
            self._publish()
            return
        expecting = self.current.expecting if self.current else None
        if not isinstance(expecting, CardWanted) and self._burning():
            # the console asked for the rest of the deck as burns: the shoe may not be able to mark them so (the line
            # dialect has no burn marker), and they are what was asked for
            self.deck.record(card)
            self._journal(message, "burn", "the end of the deck, burned as the console asked")
            self._count("burn_cards")
            self._publish()
            return
        if not isinstance(expecting, CardWanted):
            self.refresh()  # an operator's action over HTTP may have moved the round on before its notice came
            expecting = self.current.expecting if self.current else None
        if not isinstance(expecting, CardWanted):
            state = self.current.phase if self.current else "no round"
            if self._refuse(message, f"card {card} scanned while no card is expected ({state})", "not_expected"):
                self.deck.note_refused(card)
            return
        assert self.current is not None
        try:  # the card and its journal entry commit together: never dealt twice, never lost
            applied = self.service.deal(
                self.current.round_id, card, actor=f"shoe:{message.seq}",
                also=lambda session: self.journal.add(session, self._journal_entry(message, "dealt")),
            )  # fmt: skip
        except (GameError, RoundError) as error:
            self.refresh()  # this copy was behind the database: the card may be one it had not seen
            if card in self._hidden():
                again = "a face-down card was already dealt in this round"
                written = self._refuse(message, again, "face_down_again", public_card=False)
            else:
                written = self._refuse(message, str(error), "game_refused")
            if written:
                self.deck.note_refused(card)
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
        self._check_cards(self.service.clock.now())  # the camera may have seen it before its message came

    def on_untrusted(self, message: ShoeMessage | ShoeAlarm, why: str) -> None:
        """A message in the name of this table's shoe that its keys do not vouch for: never dealt, never obeyed."""
        self._count("untrusted")
        if isinstance(message, ShoeAlarm):
            self._alert("device", f"an alarm in the name of shoe {message.shoe_id} was ignored: {why}")
            self._publish()
            return
        what = described(message)
        self._refuse_apart(message, f"{what} in the name of shoe {message.shoe_id} refused: {why}", "untrusted")

    def on_out_of_sequence(self, message: ShoeMessage, why: str) -> None:
        """A message the shoe signed that takes no place in its sequence (``why``: the feed's word — an old run's
        message sent again, one the feed had moved past…): only counted if it is one already journaled (delivered
        again: QoS 1, a resend), else journaled apart and raised — a card is never dropped in silence."""
        if self.journal.has(message):
            self._count("redelivered")
            return
        self._count("out_of_sequence")
        what = described(message)
        self._refuse_apart(message, f"{what} of shoe {message.shoe_id} refused: {why}", "out_of_sequence")

    def _refuse_apart(self, message: ShoeMessage, reason: str, code: str) -> None:
        """Refused and journaled apart from the shoe's sequence (it must not take the place of the real message with
        its seq, nor be where the feed resumes), one row per distinct message; its card is never named (a forgery or
        an old card may name a face-down card of this round)."""
        digest = hashlib.sha256(message.model_dump_json().encode()).hexdigest()[:12]
        marked = message.model_copy(update={"boot_id": f"{UNTRUSTED}{digest}-{message.boot_id}"[:64]})
        self._refuse(marked, reason, code, public_card=False)

    def unsigned(self, device: str = "", what: str = "any client of the broker could deal at this table") -> None:
        """Said once at start: without a key for the shoe (or the camera), its messages cannot be told from anyone
        else's."""
        device = device or self.settings.shoe_id
        self._alert("controller", f"{device} has no signing key here: {what} (studio shoe-key new --shoe-id {device})")
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
        try:
            self._check_cards(now)
            current = self.current
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
        if self.held is not None and not self._hold_lifted():
            return
        if self._checking():
            return  # the last cards' checks end first (their window may outlast the result pause)
        ends = self._result_ends(current)
        if ends is not None and now < ends:
            return
        if self._ask_for_burns() or self._shoe_over():
            return
        opened = self.service.open(self.table_id)
        self._count("rounds_opened")
        self._follow(opened)

    def _result_ends(self, current: Applied | None) -> datetime | None:
        """When a finished round's result stops showing (its table's pause, else this controller's); None: not over."""
        if current is None or current.finished_at is None:
            return None
        ms = current.result_pause_ms if current.result_pause_ms is not None else self.settings.result_pause_ms
        return aware(current.finished_at) + timedelta(milliseconds=ms)

    @property
    def last_taken(self) -> tuple[str, int]:
        """The ``(boot, seq)`` of the last message taken from this table's shoe (("", 0): none)."""
        return self._last_message

    # ---- the database -------------------------------------------------------------------

    def recover(self) -> None:
        """Rebuild from the database: the current round, the deck since its last shuffle, where the feed stopped,
        and the refusals of the current round (the dealer console shows them again after a restart)."""
        self.most_cards()  # read now, where a failure is the start's: never later, from ``next_deadline``
        replayed = self.journal.replay(self.service.decks(self.table_id))
        self.deck, self._journal_read, self._last_message = replayed.deck, replayed.read_to, replayed.last
        self._recover_shoe(replayed.rows)
        self.refresh()
        self._hold(replayed.held)
        if self.current is not None:
            refused = replayed.refusals(self.current.round_id)[-ALERTS_KEPT:]
            self.alerts = [Alert("refused_card", why, aware(at).isoformat(), card) for why, at, card in refused]
            self._publish()
        finished = self.current is None or self.current.phase in FINISHED
        if self.settings.auto_open and self.held is None and finished and not self._checking():
            # a deck too low when the last run stopped: the dealer is asked (again, if this is a new run) at once, so
            # the cards they burn are taken as burns even before the first tick
            self._ask_for_burns()

    def feed_start(self) -> FeedStart:
        """Where the shoe's feed resumes, from the journal (``TableJournal.feed_start``)."""
        return self.journal.feed_start()

    def next_seq(self) -> int | None:
        """The first shoe ``seq`` the feed wants (None: nothing from this shoe yet): see ``feed_start``."""
        return self.feed_start().next_seq

    def most_cards(self) -> int:
        if self._most_cards is None:  # an online room takes none: 0 is an answer, not "not read yet"
            self._most_cards = self.service.most_cards(self.table_id)
        return self._most_cards

    def refresh(self) -> None:
        """Read the table's latest round again (after a restart, or when someone else moved it), with the cards
        operators entered by hand meanwhile (they count in the deck as the shoe's do)."""
        applied = self.service.latest(self.table_id)
        if applied is not None and applied.cards:
            self._take_manual_cards()
        self._follow(applied)

    def _take_manual_cards(self) -> None:
        """Record in the deck the cards dealt by hand (journaled by the API's approval, not by this controller)."""
        for row_id, card in self.journal.manual_cards(self._journal_read):
            if card is not None:
                self.deck.record(card)
                self._count("manual_cards")
            self._journal_read = max(self._journal_read, row_id)

    def _follow(self, applied: Applied | None) -> None:
        """Take the round as the service reported it after a committed step (ours or a re-read)."""
        before = (self.current.round_id, self.current.phase) if self.current else None
        if applied is not None and before != (applied.round_id, applied.phase):
            metrics.ROUND_PHASES.labels(self.table_id, applied.game, applied.phase).inc()
        self.current = None if applied is None else replace(applied, engine=None)  # the service's: not kept
        if applied is not None and applied.hidden:  # an alert naming a card now dealt face down (a new deck's copy)
            self.alerts = [a for a in self.alerts if a.card is None or Card.from_code(a.card) not in applied.hidden]
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
        due = [d for d in (self._round_deadline(), self._camera_deadline()) if d is not None]
        return min(due, default=None)

    def _round_deadline(self) -> datetime | None:
        current = self.current
        if current is None or current.phase in FINISHED:
            if self.settings.auto_open and self.held is not None:
                return self.service.clock.now() + HOLD_RECHECK  # look again for the operator's acknowledgement
            if self._shoe_end_said:
                return None  # the shoe ended at its cut card (the console was told): the new shoe's message wakes it
            if not self.settings.auto_open or (not self.deck.can_deal(self.most_cards()) and self._low_deck_said()):
                return None  # a deck too low, and the dealer asked for the rest of it: the new deck's message wakes it
            if self._checking():
                return None  # the next round waits for the checks' windows: their deadlines wake the controller
            return self._result_ends(current) or DUE
        return aware(current.window_closes_at) if current.window_closes_at else None

    # ---- alerts and views ---------------------------------------------------------------

    def _refuse(self, message: ShoeMessage, reason: str, code: str, public_card: bool = True) -> bool:
        """Record the refusal (the journal keeps the card) and alert the dealer (naming it only if not hidden);
        False, and nothing said, for a message journaled before (taken again after a failure: it was handled)."""
        if not self._journal(message, "refused", reason):
            return False
        self._count("cards_refused")
        metrics.CARDS_REFUSED.labels(self.table_id, code).inc()
        self._alert("refused_card", reason, message.card if public_card and isinstance(message, ShoeCard) else None)
        self._publish()
        return True

    def _alert(self, kind: str, message: str, card: str | None = None) -> None:
        log.warning("table %s: %s", self.table_id, message, extra=self._context())
        metrics.ALERTS.labels(self.table_id, kind).inc()
        self.alerts = [
            *self.alerts[1 - ALERTS_KEPT :],
            Alert(kind, message, self.service.clock.now().isoformat(), card),
        ]
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
        return state_view(self.table_id, self.current)

    def dealer_view(self) -> dict[str, Any]:
        """The dealer console (``services.controller.console``)."""
        camera = self.camera_state if self.settings.camera_id else None
        desk = Desk(self.deck.remaining, self.paused, self.held_why, tuple(self.alerts), camera, self._burn_wanted())
        return dealer_view(self.table_id, self.current, desk)

    def _camera_id(self) -> str:
        return self.settings.camera_id


def reread_moved(service: RoundService, controllers: Mapping[str, TableController]) -> None:
    """Re-read only the tables whose round moved without their controller (one query for all)."""
    latest = service.latest_rounds(list(controllers))
    for table, controller in controllers.items():
        if controller.moved(latest.get(table)):
            controller.refresh()
