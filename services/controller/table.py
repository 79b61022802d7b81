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

from services.bus.feed import FeedStart, stamp_time
from services.bus.messages import ShoeAlarm, ShoeCard, ShoeNewDeck, ShoeStatus, jpeg_bytes
from services.cards import Card, DeckCount, DeckTracker
from services.controller.witness import Witness
from services.db.unit_of_work import run_transaction
from services.games.base import FINISHED, CardWanted, GameError
from services.journal.models import DECK_HELD, DECK_OK, MANUAL_SHOE, DeckReport, ShoeJournal
from services.observability import metrics
from services.rounds import checks
from services.rounds.clock import aware
from services.rounds.errors import RoundError
from services.rounds.models import Round
from services.rounds.service import Applied, RoundService

log = logging.getLogger("studio.controller")
DUE = datetime.min.replace(tzinfo=UTC)  # a deadline that has already come
RETRY_AFTER = timedelta(seconds=1)  # after a step failed, before it is tried again
WINDOW_COUNTERS = {"betting": "betting_closed", "decision": "decision_timeouts"}  # counter per window kind
HOLD_RECHECK = timedelta(seconds=2)  # while a deck report holds the table: how often to look for the operator's word
# the boot id of a message journaled apart from the shoe's sequence (a forgery, a replay, one the feed had moved past)
# begins so: it never counts as a card of this table's shoe, nor as where the feed stands
UNTRUSTED = "untrusted-"
PLAYER_WINDOWS = frozenset({"decision", "turn"})  # windows that wait for one player: their end is a timeout


@dataclass(frozen=True)
class ControllerSettings:
    shoe_id: str  # the only shoe whose cards this table takes
    camera_id: str = ""  # the only overhead camera whose sightings check the shoe's cards (none: nothing is checked)
    result_pause_ms: int = 5_000  # results stay on screen this long before the next round opens
    auto_open: bool = True  # open the next round by itself (off: an operator opens rounds)


@dataclass
class Alert:
    # refused_card | misread | deck_low | deck_mismatch | deck_acknowledged | device | controller | shoe_restarted |
    # verify_*
    kind: str
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
    held: int | None = None  # the deck report that holds the table (a deck not whole) until an operator acknowledges
    held_why: str = ""
    counters: dict[str, int] = field(default_factory=dict)
    _low_deck_alerted: int = -1  # the deck (by shuffle count) already reported as too low
    _published: dict[str, dict[str, Any]] = field(default_factory=dict)
    _retry_at: datetime | None = None  # after a step failed: not before then
    _last_message: tuple[str, int] = ("", 0)  # (boot, seq) of the last message taken from this table's shoe
    _journal_read: int = 0  # the newest journal row this copy knows of: a card entered by hand after it is news
    _most_cards: int = 0  # the most cards one round of the table's game takes (read once)
    camera: Witness = field(default_factory=Witness)  # the overhead camera's recent sightings
    camera_state: str = "unknown"  # online | offline, as the camera's daemon last said

    # ---- inputs -------------------------------------------------------------------------

    def on_shoe(self, message: ShoeCard | ShoeNewDeck) -> None:
        with contextlib.suppress(ValueError):  # a stamp that is not ISO time is the shoe's problem, not ours
            lag = (self.service.clock.now() - datetime.fromisoformat(message.ts)).total_seconds()
            metrics.RECEIVE_LAG.labels(self.table_id).observe(max(0.0, lag))
        if message.shoe_id != self.settings.shoe_id:
            # a shoe wired to the wrong table: its card may be another table's face-down card, so not named
            what = "a card" if isinstance(message, ShoeCard) else "a new deck"
            self._refuse(message, f"{what} from shoe {message.shoe_id}, not this table's shoe", public_card=False)
            return
        last_boot, last_seq = self._last_message
        if last_boot and message.boot_id != last_boot and message.seq <= last_seq:
            # the feed took a new run of the shoe numbered from where it had been: a daemon that lost its outbox
            self._count("shoe_restarts")
            self._alert("shoe_restarted", f"shoe {message.shoe_id} restarted; its sequence starts again")
            self._publish()
        self._last_message = (message.boot_id, message.seq)
        if isinstance(message, ShoeNewDeck):
            self._new_deck(message)
            return
        card = Card.from_code(message.card)
        # one deck: a card in the round cannot come again, even across a new deck; a shoe of several holds copies
        in_round = self.deck.decks == 1 and self.current is not None and card in self.current.cards
        if not self.deck.can_take(card) or in_round:
            hidden = card in self._hidden()
            shown = "a face-down card" if hidden else f"card {card}"
            spent = " from this deck" if self.deck.decks == 1 else f" {self.deck.decks} times from this shoe"
            where = spent if not self.deck.can_take(card) else " in this round (before the new deck)"
            if self._refuse(message, f"{shown} was already dealt{where}", public_card=not hidden):
                self.deck.note_refused(card)
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
            state = self.current.phase if self.current else "no round"
            if self._refuse(message, f"card {card} scanned while no card is expected ({state})"):
                self.deck.note_refused(card)
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
                written = self._refuse(message, "a face-down card was already dealt in this round", public_card=False)
            else:
                written = self._refuse(message, str(error))
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

    def _new_deck(self, message: ShoeNewDeck) -> None:
        """The deck in the shoe ends: reconciled against the full deck (a report kept per deck, written with the new
        deck's journal row); a deck not whole holds the table until an operator acknowledges. Then the new deck."""
        count = self.deck.reconcile() if self.deck.touched else None
        written: list[int] = []

        def report(session: Session, entry: ShoeJournal) -> None:
            if count is None:
                return
            session.flush()  # the journal row's id
            live = self.current.round_id if self.current and self._hidden() else None
            row = DeckReport(
                table_id=self.table_id, shoe_id=message.shoe_id, round_id=live, ended_by=entry.id, seen=count.seen,
                missing=" ".join(map(str, count.missing)), doubled=" ".join(map(str, count.doubled)),
                status=DECK_OK if count.clean else DECK_HELD, created_at=self.service.clock.now(),
            )  # fmt: skip
            session.add(row)
            session.flush()
            written.append(row.id)

        if not self._journal(message, "deck", also=report):
            return  # journaled before (a message delivered again): its report too
        self.deck.shuffle()
        self._count("new_decks")
        if count is not None and written:
            self._count("decks_whole" if count.clean else "decks_not_whole")
            if not count.clean:
                self.held, self.held_why = written[-1], self._deck_text(written[-1], count)
                self._alert("deck_mismatch", self.held_why)
        self._publish()

    @staticmethod
    def _deck_text(report: int, count: DeckCount) -> str:
        """What the dealer is told of a deck not whole: counts, never card names (a missing card's code may be a
        face-down card's in the deck after it; the operator's page names them, under its own rules)."""
        return (
            f"deck not whole: {len(count.missing)} missing, {len(count.doubled)} seen twice: the table is held until "
            f"an operator acknowledges deck report #{report} (count the cards)"
        )

    def _hold_lifted(self) -> bool:
        """Whether operators have acknowledged every deck report that holds the table (read from the database); the
        next one still held, if any, is what the dealer is told about."""
        with self.service.sessions() as session:
            found = session.execute(
                select(DeckReport.status, DeckReport.acknowledged_by).where(DeckReport.id == self.held)
            ).first()
            still = _held_report(session, self.table_id)
        if found is not None and found.status != DECK_HELD:
            self._alert("deck_acknowledged", f"deck report #{self.held} acknowledged by {found.acknowledged_by}")
        if still is not None:
            if still.id != self.held:
                self.held, self.held_why = still.id, self._deck_text(still.id, _count_of(still))
                self._publish()
            return False
        self._alert("deck_acknowledged", "every deck report acknowledged: rounds resume")
        self.held, self.held_why = None, ""
        self._publish()
        return True

    def on_untrusted(self, message: ShoeCard | ShoeNewDeck | ShoeAlarm, why: str) -> None:
        """A message in the name of this table's shoe that its keys do not vouch for: never dealt, never obeyed."""
        self._count("untrusted")
        if isinstance(message, ShoeAlarm):
            self._alert("device", f"an alarm in the name of shoe {message.shoe_id} was ignored: {why}")
            self._publish()
            return
        what = "a card" if isinstance(message, ShoeCard) else "a new deck"
        self._refuse_apart(message, f"{what} in the name of shoe {message.shoe_id} refused: {why}")

    def on_out_of_sequence(self, message: ShoeCard | ShoeNewDeck, why: str) -> None:
        """A message the shoe signed that takes no place in its sequence (``why``: the feed's word — an old run's
        message sent again, one the feed had moved past…): only counted if it is one already journaled (delivered
        again: QoS 1, a resend), else journaled apart and raised — a card is never dropped in silence."""
        if self._journaled(message):
            self._count("redelivered")
            return
        self._count("out_of_sequence")
        what = "a card" if isinstance(message, ShoeCard) else "a new deck"
        self._refuse_apart(message, f"{what} of shoe {message.shoe_id} refused: {why}")

    def _refuse_apart(self, message: ShoeCard | ShoeNewDeck, reason: str) -> None:
        """Refused and journaled apart from the shoe's sequence (it must not take the place of the real message with
        its seq, nor be where the feed resumes), one row per distinct message; its card is never named (a forgery or
        an old card may name a face-down card of this round)."""
        digest = hashlib.sha256(message.model_dump_json().encode()).hexdigest()[:12]
        marked = message.model_copy(update={"boot_id": f"{UNTRUSTED}{digest}-{message.boot_id}"[:64]})
        self._refuse(marked, reason, public_card=False)

    def _journaled(self, message: ShoeCard | ShoeNewDeck) -> bool:
        """Whether this very message (its shoe, run and seq) is in the journal."""
        with self.service.sessions() as session:
            found = session.scalar(
                select(ShoeJournal.id).where(
                    ShoeJournal.table_id == self.table_id, ShoeJournal.shoe_id == message.shoe_id,
                    ShoeJournal.boot_id == message.boot_id, ShoeJournal.seq == message.seq,
                )
            )  # fmt: skip
        return found is not None

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
        pause = timedelta(milliseconds=self.settings.result_pause_ms)
        if current is not None and current.finished_at is not None and now < aware(current.finished_at) + pause:
            return
        if self._ask_for_burns():
            return
        self.service.open_round(self.table_id)
        self._count("rounds_opened")
        self.refresh()

    def _ask_for_burns(self) -> bool:
        """Whether the deck is too low for another round; if so the dealer is asked (once per deck) to run the rest
        of it through the shoe as burns, then load a new deck — the cards that come before the new deck are burns."""
        if self.deck.can_deal(self.most_cards()):
            return False
        if self._low_deck_alerted != self.deck.shuffles:  # once per deck
            self._low_deck_alerted = self.deck.shuffles
            self._alert(
                "deck_low",
                f"{self.deck.remaining} cards left: run them through the shoe as burns, then load a new deck",
            )
            self._publish()
        return True

    def _burning(self) -> bool:
        """The dealer was asked to burn the rest of this deck, and no round is being played."""
        finished = self.current is None or self.current.phase in FINISHED
        return finished and self._low_deck_alerted == self.deck.shuffles

    @property
    def last_taken(self) -> tuple[str, int]:
        """The ``(boot, seq)`` of the last message taken from this table's shoe (("", 0): none)."""
        return self._last_message

    # ---- the database -------------------------------------------------------------------

    def recover(self) -> None:
        """Rebuild from the database: the current round, the deck since its last shuffle, where the feed stopped,
        and the refusals of the current round (the dealer console shows them again after a restart)."""
        with self.service.sessions() as session:
            rows = session.execute(
                select(
                    ShoeJournal.kind, ShoeJournal.card, ShoeJournal.disposition, ShoeJournal.reason,
                    ShoeJournal.round_id, ShoeJournal.received_at, ShoeJournal.shoe_id, ShoeJournal.boot_id,
                    ShoeJournal.seq, ShoeJournal.id,
                )
                .where(ShoeJournal.table_id == self.table_id)
                .order_by(ShoeJournal.id)
            ).all()  # fmt: skip
            held = _held_report(session, self.table_id)
        self.most_cards()  # read now, where a failure is the start's: never later, from ``next_deadline``
        self.deck = DeckTracker(decks=self.service.decks(self.table_id))
        for row in rows:
            if row.kind == "new_deck" and row.disposition == "deck":  # not another shoe's, refused
                self.deck.shuffle()
            elif row.disposition in ("dealt", "burn") and row.card:
                self.deck.record(Card.from_code(row.card))
            elif row.disposition == "refused" and row.card and self._own(row.shoe_id, row.boot_id):
                self.deck.note_refused(Card.from_code(row.card))
        self._journal_read = max((row.id for row in rows), default=0)
        own = [row for row in rows if self._own(row.shoe_id, row.boot_id)]
        self._last_message = (own[-1].boot_id, int(own[-1].seq)) if own else ("", 0)
        self.refresh()
        self.held, self.held_why = None, ""
        if held is not None:
            self.held, self.held_why = held.id, self._deck_text(held.id, _count_of(held))
        if self.current is not None:
            refused = [row for row in rows if row.disposition == "refused" and row.round_id == self.current.round_id]
            self.alerts = [
                Alert("refused_card", row.reason, aware(row.received_at).isoformat(),
                      row.card if row.card and f"card {row.card} " in row.reason else None)  # named only if it was
                for row in refused[-20:]
            ]  # fmt: skip
            self._publish()
        finished = self.current is None or self.current.phase in FINISHED
        if self.settings.auto_open and self.held is None and finished and not self._checking():
            # a deck too low when the last run stopped: the dealer is asked (again, if this is a new run) at once, so
            # the cards they burn are taken as burns even before the first tick
            self._ask_for_burns()

    def _own(self, shoe_id: str, boot_id: str) -> bool:
        """Whether a journaled message came from this table's shoe (not another shoe's, not a forgery in its name)."""
        return shoe_id == self.settings.shoe_id and not boot_id.startswith(UNTRUSTED)

    def feed_start(self) -> FeedStart:
        """Where the shoe's feed resumes, from the journal: after the last message of the shoe's sequence taken (its
        run and seq — not the highest seq of any run: a run that lost its outbox counts from 1 again), knowing the
        newest stamp taken. A message journaled apart (a forgery copying a real stamp, a replay) does not count: it
        must not make a restarted controller skip the real message with that ``seq`` (found by the simulation)."""
        own = (
            ShoeJournal.table_id == self.table_id,
            ShoeJournal.shoe_id == self.settings.shoe_id,
            ~ShoeJournal.boot_id.startswith(UNTRUSTED),
        )
        with self.service.sessions() as session:
            last = session.execute(
                select(ShoeJournal.boot_id, ShoeJournal.seq).where(*own).order_by(ShoeJournal.id.desc()).limit(1)
            ).first()
            # a row journaled before stamps were kept has only its time of receipt: later than its stamp, so never
            # less strict
            stamped = func.coalesce(ShoeJournal.stamped_at, ShoeJournal.received_at)
            newest = session.scalar(select(func.max(stamped)).where(*own))
        if last is None:
            return FeedStart()
        return FeedStart(int(last.seq) + 1, last.boot_id, aware(newest) if newest is not None else None)

    def next_seq(self) -> int | None:
        """The first shoe ``seq`` the feed wants (None: nothing from this shoe yet): see ``feed_start``."""
        return self.feed_start().next_seq

    def most_cards(self) -> int:
        if not self._most_cards:
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
        with self.service.sessions() as session:
            rows = session.execute(
                select(ShoeJournal.id, ShoeJournal.card).where(
                    ShoeJournal.table_id == self.table_id, ShoeJournal.shoe_id == MANUAL_SHOE,
                    ShoeJournal.id > self._journal_read, ShoeJournal.disposition == "dealt",
                )
            ).all()  # fmt: skip
        for row in rows:
            if row.card:
                self.deck.record(Card.from_code(row.card))
                self._count("manual_cards")
            self._journal_read = max(self._journal_read, row.id)

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
        checked = self.camera.deadline(self._checks(), self._window(), self._dealt)
        due = [d for d in (self._round_deadline(), checked) if d is not None]
        return min(due, default=None)

    def _checks(self) -> tuple[checks.OpenCheck, ...]:
        return self.current.checks if self.current is not None and self.current.verify != checks.OFF else ()

    def _checking(self) -> bool:
        """A card of the round is still within its window for the camera."""
        return any(check.status == checks.PENDING for check in self._checks())

    def _round_deadline(self) -> datetime | None:
        current = self.current
        if current is None or current.phase in FINISHED:
            if self.settings.auto_open and self.held is not None:
                return self.service.clock.now() + HOLD_RECHECK  # look again for the operator's acknowledgement
            if not self.settings.auto_open or not self.deck.can_deal(self.most_cards()):
                return None
            if self._checking():
                return None  # the next round waits for the checks' windows: their deadlines wake the controller
            if current is None or current.finished_at is None:
                return DUE
            return aware(current.finished_at) + timedelta(milliseconds=self.settings.result_pause_ms)
        return aware(current.window_closes_at) if current.window_closes_at else None

    # ---- the shoe + camera cross-check (``services.rounds.checks``) ------------------------

    def on_sighting(self, message: ShoeCard) -> None:
        """A card the overhead camera saw (its signature already checked): matched against the open checks."""
        now = self.service.clock.now()
        if not self.settings.camera_id or message.shoe_id != self.settings.camera_id:
            self._alert("device", f"a sighting from camera {message.shoe_id}, not this table's camera: ignored")
            self._publish()
            return
        why = self.camera.take(message, now)
        if why:
            log.info("table %s: sighting %s ignored: %s", self.table_id, message.seq, why)
            self._count("sightings_ignored")
            return
        self._count("sightings")
        self._check_cards(now)

    def on_camera_status(self, status: ShoeStatus) -> None:
        """The overhead camera's daemon went on or off line (its last will says offline): the dealer is told."""
        if status.shoe_id != self.settings.camera_id:
            return
        state = "online" if status.state == "online" and status.device != "disconnected" else "offline"
        if state == self.camera_state:
            return
        if state == "offline":
            held = "settlement waits for an operator's word on each" if self._holds() else "alerts follow"
            self._alert("verify_camera", f"the overhead camera {status.shoe_id} is offline: it checks no card ({held})")
        elif self.camera_state == "offline":
            self._alert("verify_camera", f"the overhead camera {status.shoe_id} is back: it checks the cards again")
        self.camera_state = state
        self._publish()

    def _holds(self) -> bool:
        return self.current is not None and self.current.verify == checks.HOLD

    def _check_cards(self, now: datetime) -> None:
        """Decide every check the camera's sightings (or the end of their window) now settle, one at a time."""
        while self.current is not None and self.current.verify != checks.OFF:
            step = self.camera.next_outcome(self.current.checks, self._window(), now, self._dealt)
            if step is None:
                break
            check, sighting = step
            seen = Card.from_code(sighting.card) if sighting else None
            crop = sighting.crop if sighting else b""
            confidence = sighting.confidence if sighting else None
            applied = self.service.camera_saw(self.current.round_id, check.position, seen, confidence, crop)
            if sighting is None:
                self._verify_alert("verify_unseen", check, f"the camera did not see the shoe's {check.card}")
            elif sighting.card != check.card:
                camera = sighting.card if Card.from_code(sighting.card) not in self._hidden() else "another card"
                self._verify_alert("verify_mismatch", check, f"the shoe read {check.card}, the camera saw {camera}")
            self._count(f"checks_{'agreed' if sighting and sighting.card == check.card else 'disputed'}")
            self._follow(applied)
        for sighting in self.camera.unexplained(self._checks(), self._window(), now, self._dealt):
            self._alert("verify_unexplained", f"the camera saw {sighting.card}; the shoe reported no such card")
            self._publish()

    def _verify_alert(self, kind: str, check: checks.OpenCheck, what: str) -> None:
        then = "settlement waits for an operator's word (ops page)" if self._holds() else "check the video"
        self._alert(kind, f"card {check.position + 1}: {what}; {then}", check.card)

    def _window(self) -> timedelta:
        return timedelta(milliseconds=self.current.verify_window_ms if self.current else 0)

    def _dealt(self, code: str) -> bool:
        return self.deck.has_seen(Card.from_code(code))

    def _journal_entry(self, message: ShoeCard | ShoeNewDeck, disposition: str, reason: str = "") -> ShoeJournal:
        card = message.card if isinstance(message, ShoeCard) else None
        read = (message.source, message.confidence) if isinstance(message, ShoeCard) else ("", None)
        return ShoeJournal(
            table_id=self.table_id, shoe_id=message.shoe_id, boot_id=message.boot_id, seq=message.seq,
            kind=message.type, card=card, burn=isinstance(message, ShoeCard) and message.burn,
            disposition=disposition, reason=reason[:500],
            round_id=self.current.round_id if self.current else None, video_tc=message.video_tc,
            source=read[0], confidence=read[1], raw=message.raw, received_at=self.service.clock.now(),
            stamped_at=_utc(stamp_time(message.ts)),
            crop=jpeg_bytes(message.crop) or None if isinstance(message, ShoeCard) and message.crop else None,
        )  # fmt: skip

    def _journal(
        self,
        message: ShoeCard | ShoeNewDeck,
        disposition: str,
        reason: str = "",
        also: Callable[[Session, ShoeJournal], None] | None = None,
    ) -> bool:
        """Journal the message (with what ``also`` writes, in the same transaction); False if it was already."""
        metrics.CARDS.labels(self.table_id, disposition).inc()
        entry = self._journal_entry(message, disposition, reason)

        def write(session: Session) -> None:
            self.service.fenced(session, self.table_id)
            session.add(entry)
            if also is not None:
                also(session, entry)

        try:
            run_transaction(self.service.sessions, write)
        except IntegrityError:
            log.info("table %s: shoe message %s already journaled", self.table_id, message.seq)
            return False
        return True

    # ---- alerts and views ---------------------------------------------------------------

    def _refuse(self, message: ShoeCard | ShoeNewDeck, reason: str, public_card: bool = True) -> bool:
        """Record the refusal (the journal keeps the card) and alert the dealer (naming it only if not hidden);
        False, and nothing said, for a message journaled before (taken again after a failure: it was handled)."""
        if not self._journal(message, "refused", reason):
            return False
        self._count("cards_refused")
        self._alert("refused_card", reason, message.card if public_card and isinstance(message, ShoeCard) else None)
        self._publish()
        return True

    def _hidden(self) -> frozenset[Card]:
        """Cards of the current round that are dealt but not shown to the public (the engine says which)."""
        return self.current.hidden if self.current is not None else frozenset()

    def _alert(self, kind: str, message: str, card: str | None = None) -> None:
        log.warning("table %s: %s", self.table_id, message, extra=self._context())
        metrics.ALERTS.labels(self.table_id, kind).inc()
        self.alerts = [*self.alerts[-19:], Alert(kind, message, self.service.clock.now().isoformat(), card)]
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
            if current.verify != checks.OFF:
                hidden = frozenset(str(card) for card in current.hidden)
                view["checks"] = [check.out(hidden) for check in current.checks]
            if current.phase == checks.VERIFYING:
                view["phase"] = checks.VERIFYING
                view["waiting_for"] = _verifying(current.checks)
            view.setdefault("waiting_for", expecting.text if expecting else "nothing (the round is over)")
            if isinstance(expecting, CardWanted):
                card = {"position": expecting.position, "index": expecting.index, "face_up": expecting.face_up}
                view.setdefault("next_card", card)
        return (
            view
            | {
                "deck_remaining": self.deck.remaining,
                "paused": self.paused,
                "held": self.held_why,
                "alerts": [alert.__dict__ for alert in self.alerts[-10:]],
            }
            | ({"camera": self.camera_state} if self.settings.camera_id else {})
        )


def _utc(moment: datetime | None) -> datetime | None:
    """A stamp as UTC (a database column without zones keeps the wall time only)."""
    return moment.astimezone(UTC) if moment is not None else None


def _verifying(open_checks: tuple[checks.OpenCheck, ...]) -> str:
    """What a round held for its checks waits for: the camera's sightings, or an operator's word."""
    pending = [str(check.position + 1) for check in open_checks if check.status == checks.PENDING]
    if pending:
        return f"the overhead camera to see card {', '.join(pending)}: settlement waits"
    disputed = ", ".join(str(check.position + 1) for check in open_checks)
    return f"an operator's word on card {disputed}: settlement waits (ops page)"


def _held_report(session: Session, table_id: str) -> Any:
    """The table's oldest deck report still holding it (None: none)."""
    return session.execute(
        select(DeckReport.id, DeckReport.missing, DeckReport.doubled, DeckReport.seen, DeckReport.round_id)
        .where(DeckReport.table_id == table_id, DeckReport.status == DECK_HELD)
        .order_by(DeckReport.id)
        .limit(1)
    ).first()


def _count_of(report: Any) -> DeckCount:
    missing, doubled = (tuple(map(Card.from_code, codes.split())) for codes in (report.missing, report.doubled))
    return DeckCount(report.seen, missing, doubled)


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
