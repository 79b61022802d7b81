"""Cards the table must not take, through the whole stack: pty shoe → shoe daemon → broker → controller → ledger.

Each case of ``test_table.py`` (the table controller alone, on a manual clock) again on real parts: the
refusal is journaled with its reason, raised on the dealer console (``…/round/dealer``), the round's
cards are untouched, and the round, dealt properly afterwards, settles exactly as scripted.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from sqlalchemy import Engine, select

from hardware.serial_shoe import Backoff, SerialShoe
from hardware.sim import VirtualShoe
from hardware.sim.serial_shoe import misread_frame
from services.bus import topics
from services.bus.client import Subscriber
from services.games.pokdeng import Phase, Position, Side
from services.games.pokdeng.port import POKDENG
from services.journal.models import ShoeJournal
from services.rounds.engines import load
from services.rounds.models import Round
from services.rounds.pokdeng import Bet, pokdeng
from services.shoe.daemon import ShoeConfig, ShoeDaemon
from services.shoe.signing import ShoeKey, sign
from tests.controller import stack
from tests.controller.stack import WINDOWS, Studio
from tests.support import wait_until

studio = stack.studio  # the fixture, shared with test_end_to_end.py

# A 2H 3D = 5: ana stands (her threshold, 4, on timeout); B 4C 2S = 6 stands; C 6D 7S = 3: nobody decides, draws 9H;
# banker 5C up (no insurance), KD face down = 5: draws 4S = 9 and wins every seat. No hand is Pok.
SCRIPT = "2H 4C 6D 5C 3D 2S 7S KD 9H 4S".split()
HIDDEN = "KD"  # the banker's face-down card
NETS = {"ana": -100, "binh": 50}  # ana: 100 on seat A, player side; binh: 50 on seat B, banker side
OTHER_SHOE = "other-shoe"


@pytest.fixture
def make_studio(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[Callable[..., Studio]]:
    """A studio with some windows changed (milliseconds); closed after the test."""
    made: list[Studio] = []

    def make(**windows: int) -> Studio:
        made.append(Studio(database, mqtt_url, tmp_path, {**WINDOWS, **windows}))
        return made[-1]

    yield make
    for running in made:
        running.close()


# ---- helpers ------------------------------------------------------------------------------


def open_round_with_bets(studio: Studio) -> str:
    studio.fund(*NETS)
    round_id = studio.service.open_round(studio.table)
    pokdeng(studio.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position.A, 100)], "k1")
    pokdeng(studio.service).place_bets("binh", round_id, [Bet(Side.BANKER, Position.B, 50)], "k2")
    notify(studio, round_id)
    return round_id


def notify(studio: Studio, round_id: str) -> None:
    """What the API does after changing a round: tell the controller, so it re-reads it at once."""
    payload = json.dumps({"v": 1, "type": "round_changed", "round_id": round_id})
    studio.views.client.publish(topics.round_commands(studio.table), payload, qos=1)


def dealer(studio: Studio) -> dict[str, Any]:
    return studio.latest(topics.round_dealer(studio.table))


def wait_for_dealer(
    studio: Studio, condition: Callable[[dict[str, Any]], bool], what: str, timeout: float = 10
) -> dict[str, Any]:
    try:
        wait_until(lambda: condition(dealer(studio)), timeout, what)
    except TimeoutError as error:
        raise TimeoutError(f"{error}; last dealer view: {dealer(studio)}") from None
    return dealer(studio)


def on_table(view: dict[str, Any]) -> int:
    return sum(len(hand["cards"]) for hand in view.get("hands", {}).values())


def deal_to(studio: Studio, round_id: str, cards: Iterator[str], count: int) -> dict[str, Any]:
    """Deal as the console asks until ``count`` cards are on the table; the dealer view then."""
    studio.deal_until(cards, round_id, lambda view: on_table(view) == count)
    return dealer(studio)


def refusals(view: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The dealer console's refused-card alerts as (message, card)."""
    return [(alert["message"], alert["card"]) for alert in view.get("alerts", []) if alert["kind"] == "refused_card"]


class Entry(NamedTuple):
    """A row of the shoe journal, as the tests look at it."""

    card: str | None
    disposition: str
    reason: str
    burn: bool
    shoe_id: str
    round_id: str | None


def journal(studio: Studio) -> list[Entry]:
    with studio.service.sessions() as session:
        rows = session.execute(
            select(
                ShoeJournal.card, ShoeJournal.disposition, ShoeJournal.reason, ShoeJournal.burn,
                ShoeJournal.shoe_id, ShoeJournal.round_id,
            )
            .where(ShoeJournal.table_id == studio.table)
            .order_by(ShoeJournal.id)
        ).all()  # fmt: skip
    return [Entry(*row) for row in rows]


def dispositions(studio: Studio) -> list[tuple[str | None, str]]:
    return [(row.card, row.disposition) for row in journal(studio)]


def assert_settled_as_scripted(studio: Studio, round_id: str) -> None:
    """The round, rebuilt from its log, holds the scripted cards only; the wallets moved by its result, no more."""
    with studio.service.sessions() as session:
        round_ = session.get(Round, round_id)
        assert round_ is not None and round_.phase == Phase.SETTLED
        engine = load(session, round_, POKDENG)
    assert [str(card) for card in engine.cards] == SCRIPT
    assert engine.result is not None and engine.result.player_nets() == NETS
    for player, net in NETS.items():
        wallet = studio.wallets.balance(player)
        assert (wallet["balance"], wallet["held"]) == (10_000 + net, 0), player


def assert_never_named(studio: Studio, round_id: str, card: str) -> None:
    """No refusal alert ever names ``card``; no state or dealer message names it before the banker's reveal."""
    named = re.compile(rf"\b{card}\b")
    unrevealed = 0
    for message in list(studio.views.messages):
        payload = json.loads(message.payload)
        for text, alert_card in refusals(payload):
            assert alert_card != card and not named.search(text), f"{card} named by an alert on {message.topic}"
        banker = payload.get("hands", {}).get("banker", {}).get("cards", [])
        if payload.get("round_id") == round_id and (len(banker) < 2 or banker[1] in (None, "received")):
            unrevealed += 1
            assert not named.search(message.payload.decode()), f"{card} leaked on {message.topic}: {payload}"
    assert unrevealed > 0


class OtherShoe:
    """A second shoe (its own pty and daemon, its own shoe id) wired to the same table's topics by mistake."""

    def __init__(self, studio: Studio, directory: Path) -> None:
        self.sim = VirtualShoe("monitor", directory / "other-pty")
        config = ShoeConfig(
            studio.table, OTHER_SHOE, directory / "other-outbox.db", studio.controller.url, "sim", heartbeat=0.2
        )
        self.daemon = ShoeDaemon(config, SerialShoe(str(self.sim.path), "monitor", backoff=Backoff(0.02)).events)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.daemon.run, args=(self.stop,), daemon=True)
        self.thread.start()
        wait_until(lambda: self.daemon.device_state == "connected", 10, "the other shoe")
        wait_until(self.daemon.client.is_connected, 10, "the other shoe's broker connection")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        self.sim.close()


def deal_from_the_other_shoe(studio: Studio, other: OtherShoe, card: str) -> None:
    """Scan ``card`` in the other shoe; return once it is on the table's card topic, which the controller reads."""
    cards = Subscriber(studio.controller.url, [topics.shoe_cards(studio.table)])
    try:
        cards.wait_subscribed()
        other.sim.deal(card)
        wait_until(
            lambda: any(json.loads(m.payload).get("shoe_id") == OTHER_SHOE for m in list(cards.messages)),
            10,
            "the other shoe's card on the table's card topic",
        )
    finally:
        cards.close()


# ---- the cases ----------------------------------------------------------------------------


def test_a_card_scanned_while_betting_is_refused_and_the_round_then_deals_and_settles(
    make_studio: Callable[..., Studio],
) -> None:
    studio = make_studio(betting_window_ms=60_000)  # betting stays open until the test closes it
    round_id = open_round_with_bets(studio)
    wait_for_dealer(studio, lambda view: view.get("round_id") == round_id, "the round on the dealer console")
    studio.sim.deal("AS")
    reason = "card AS scanned while no card is expected (betting)"
    view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the refusal")
    assert refusals(view) == [(reason, "AS")]
    assert view["phase"] == Phase.BETTING and on_table(view) == 0 and view["deck_remaining"] == 52
    assert [(row.card, row.disposition, row.reason, row.round_id) for row in journal(studio)] == [
        ("AS", "refused", reason, round_id)
    ]

    pokdeng(studio.service).close_betting(round_id)
    notify(studio, round_id)
    studio.deal_as_the_console_says(iter(SCRIPT), round_id)
    assert_settled_as_scripted(studio, round_id)
    assert dispositions(studio) == [("AS", "refused"), *((card, "dealt") for card in SCRIPT)]


def test_a_card_after_the_round_settled_is_refused_and_moves_no_money(studio: Studio) -> None:
    round_id = open_round_with_bets(studio)
    studio.deal_as_the_console_says(iter(SCRIPT), round_id)
    assert_settled_as_scripted(studio, round_id)
    settled = dealer(studio)
    assert refusals(settled) == []

    studio.sim.deal("AS")
    reason = "card AS scanned while no card is expected (settled)"
    view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the refusal")
    assert refusals(view) == [(reason, "AS")]
    assert (view["phase"], view["hands"], view["result"]) == (Phase.SETTLED, settled["hands"], settled["result"])
    assert journal(studio)[-1][:4] == ("AS", "refused", reason, False)
    assert dispositions(studio) == [*((card, "dealt") for card in SCRIPT), ("AS", "refused")]
    assert_settled_as_scripted(studio, round_id)  # the wallets are as the result left them


def test_a_duplicate_of_a_dealt_card_is_refused_named_and_not_dealt(studio: Studio) -> None:
    round_id = open_round_with_bets(studio)
    cards = iter(SCRIPT)
    deal_to(studio, round_id, cards, 2)  # 2H to A, 4C to B
    studio.sim.deal("2H")
    reason = "card 2H was already dealt from this deck"
    view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the refusal")
    assert refusals(view) == [(reason, "2H")]
    assert view["next_card"] == {"position": "C", "index": 0, "face_up": True}
    assert (view["hands"]["A"]["cards"], view["hands"]["B"]["cards"], view["deck_remaining"]) == (["2H"], ["4C"], 50)
    assert journal(studio)[-1][:3] == ("2H", "refused", reason)

    studio.deal_as_the_console_says(cards, round_id)
    assert_settled_as_scripted(studio, round_id)
    dealt = [(card, "dealt") for card in SCRIPT]
    assert dispositions(studio) == [*dealt[:2], ("2H", "refused"), *dealt[2:]]


def test_a_duplicate_of_the_face_down_card_is_refused_without_naming_it_before_the_reveal(
    make_studio: Callable[..., Studio],
) -> None:
    studio = make_studio(decision_window_ms=60_000)  # the round waits on ana's decision, the banker's card hidden
    round_id = open_round_with_bets(studio)
    cards = iter(SCRIPT)
    deal_to(studio, round_id, cards, 8)
    view = wait_for_dealer(studio, lambda view: view.get("decision", {}).get("seat") == "A", "ana's decision window")
    assert view["hands"]["banker"]["cards"] == ["5C", "received"]

    studio.sim.deal(HIDDEN)
    reason = "a face-down card was already dealt from this deck"
    view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the refusal")
    assert refusals(view) == [(reason, None)]
    assert view["hands"]["banker"]["cards"] == ["5C", "received"] and view["decision"]["seat"] == "A"
    assert journal(studio)[-1][:3] == (HIDDEN, "refused", reason)  # the journal is not published: it keeps the card

    pokdeng(studio.service).decide("ana", round_id, Position.A, False)
    notify(studio, round_id)
    studio.deal_as_the_console_says(cards, round_id)
    assert_settled_as_scripted(studio, round_id)
    assert dealer(studio)["hands"]["banker"]["cards"] == ["5C", HIDDEN, "4S"]  # revealed at last
    assert_never_named(studio, round_id, HIDDEN)
    dealt = [(card, "dealt") for card in SCRIPT]
    assert dispositions(studio) == [*dealt[:8], (HIDDEN, "refused"), *dealt[8:]]


def test_a_card_or_new_deck_from_another_shoe_is_refused_unnamed_journaled_and_raised(
    studio: Studio, tmp_path: Path
) -> None:
    other = OtherShoe(studio, tmp_path)
    try:
        round_id = open_round_with_bets(studio)
        cards = iter(SCRIPT)
        deal_to(studio, round_id, cards, 1)  # 2H to A
        deal_from_the_other_shoe(studio, other, "QH")  # maybe another table's face-down card: never named here
        reason = f"a card from shoe {OTHER_SHOE}, not this table's shoe"
        view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the refusal")
        assert refusals(view) == [(reason, None)]
        assert view["next_card"] == {"position": "B", "index": 0, "face_up": True}
        assert (on_table(view), view["deck_remaining"]) == (1, 51)
        assert journal(studio)[-1][:5] == ("QH", "refused", reason, False, OTHER_SHOE)

        other.daemon.new_deck()  # the other shoe's new deck must not start this table's deck over
        deck_reason = f"a new deck from shoe {OTHER_SHOE}, not this table's shoe"
        view = wait_for_dealer(studio, lambda view: len(refusals(view)) == 2, "the new deck's refusal")
        assert refusals(view) == [(reason, None), (deck_reason, None)] and view["deck_remaining"] == 51
        assert journal(studio)[-1][:5] == (None, "refused", deck_reason, False, OTHER_SHOE)

        studio.deal_as_the_console_says(cards, round_id)
        assert_settled_as_scripted(studio, round_id)
        dealt = [(card, "dealt") for card in SCRIPT]
        assert dispositions(studio) == [dealt[0], ("QH", "refused"), (None, "refused"), *dealt[1:]]
        assert [row.shoe_id for row in journal(studio)].count(OTHER_SHOE) == 2
        for message in list(studio.views.messages):
            assert not re.search(r"\bQH\b", message.payload.decode()), f"QH named on {message.topic}"
    finally:
        other.close()


def test_a_burn_card_is_journaled_as_burn_and_the_next_card_goes_where_expected(studio: Studio) -> None:
    round_id = open_round_with_bets(studio)
    cards = iter(SCRIPT)
    deal_to(studio, round_id, cards, 1)  # 2H to A
    studio.sim.deal("8H", burn=True)
    view = wait_for_dealer(studio, lambda view: view.get("deck_remaining") == 50, "the burn card out of the deck")
    assert view["next_card"] == {"position": "B", "index": 0, "face_up": True} and on_table(view) == 1
    assert journal(studio)[-1][:4] == ("8H", "burn", "", True)
    assert refusals(view) == []

    studio.sim.deal("8H")  # a burnt card is out of the deck: scanned again, it is refused
    view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the refusal")
    assert refusals(view) == [("card 8H was already dealt from this deck", "8H")]

    view = deal_to(studio, round_id, cards, 2)
    assert view["hands"]["B"]["cards"] == ["4C"] and view["hands"]["A"]["cards"] == ["2H"]
    studio.deal_as_the_console_says(cards, round_id)
    assert_settled_as_scripted(studio, round_id)
    assert not any("8H" in hand["cards"] for hand in dealer(studio)["hands"].values())
    dealt = [(card, "dealt") for card in SCRIPT]
    assert dispositions(studio) == [dealt[0], ("8H", "burn"), ("8H", "refused"), *dealt[1:]]


def test_a_misread_pauses_the_deal_until_the_next_card_is_scanned(studio: Studio) -> None:
    round_id = open_round_with_bets(studio)
    cards = iter(SCRIPT)
    deal_to(studio, round_id, cards, 1)  # 2H to A
    studio.sim.write(misread_frame("4C", "monitor"))  # the next card went through the reader unread
    view = wait_for_dealer(studio, lambda view: bool(view.get("paused")), "the pause")
    assert view["paused"].startswith("misread at ") and view["paused"].endswith(": re-scan the card")
    misreads = [alert for alert in view["alerts"] if alert["kind"] == "misread"]
    assert len(misreads) == 1 and "could not read a card" in misreads[0]["message"] and misreads[0]["card"] is None
    assert view["next_card"] == {"position": "B", "index": 0, "face_up": True} and on_table(view) == 1

    view = deal_to(studio, round_id, cards, 2)  # the dealer scans it again
    assert view["paused"] == "" and view["hands"]["B"]["cards"] == ["4C"]
    studio.deal_as_the_console_says(cards, round_id)
    assert_settled_as_scripted(studio, round_id)
    assert dispositions(studio) == [(card, "dealt") for card in SCRIPT]  # a misread is an alarm, not a shoe card


def forge(studio: Studio, card: str, sign_with: ShoeKey | None) -> None:
    """What an anonymous client of the broker can do: copy the shoe's last message, next seq, another card."""
    cards = Subscriber(studio.controller.url, [topics.shoe_cards(studio.table)])
    try:
        cards.wait_subscribed()
        last = studio.daemon.outbox.last_seq
        real = dict(json.loads(studio.daemon.outbox.between(last, last)[0][1]))
        forged = {k: v for k, v in real.items() if k not in ("sig", "key_id")} | {"seq": last + 1, "card": card}
        payload = json.dumps(forged).encode()
        if sign_with is not None:
            payload = sign(payload, sign_with)
        cards.client.publish(topics.shoe_cards(studio.table), payload, qos=1).wait_for_publish(5)
        wait_until(lambda: any(m.payload == payload for m in list(cards.messages)), 10, "the forgery on the topic")
    finally:
        cards.close()


def test_cards_in_the_shoes_name_without_its_key_are_refused_and_the_real_cards_are_dealt(studio: Studio) -> None:
    """The attack found by probing: a card with the shoe's id, boot id and next seq, published by anyone."""
    round_id = open_round_with_bets(studio)
    cards = iter(SCRIPT)
    deal_to(studio, round_id, cards, 7)  # the next card is the banker's face-down one
    forge(studio, "AD", sign_with=None)
    view = wait_for_dealer(studio, lambda view: bool(refusals(view)), "the first refusal")
    thief = ShoeKey(studio.shoe_id, studio.key.key_id, b"not the shoe's secret, 32 bytes!")
    forge(studio, "AC", sign_with=thief)
    view = wait_for_dealer(studio, lambda view: len(refusals(view)) == 2, "the second refusal")
    assert [text for text, _ in refusals(view)] == [
        f"a card in the name of shoe {studio.shoe_id} refused: unsigned",
        f"a card in the name of shoe {studio.shoe_id} refused: the signature does not match the message",
    ]
    assert [card for _, card in refusals(view)] == [None, None], "a forgery may name a face-down card: never shown"
    assert on_table(view) == 7 and view["next_card"] == {"position": "banker", "index": 1, "face_up": False}
    studio.deal_as_the_console_says(cards, round_id)
    assert_settled_as_scripted(studio, round_id)  # the real face-down card, not the forgery
    refused = [row for row in journal(studio) if row.disposition == "refused"]
    assert [(row.card, row.shoe_id) for row in refused] == [("AD", studio.shoe_id), ("AC", studio.shoe_id)]
    assert [card for card, disposition in dispositions(studio) if disposition == "dealt"] == SCRIPT
