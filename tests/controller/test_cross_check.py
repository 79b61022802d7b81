"""The shoe + camera cross-check through the table controller, on the real round service and a manual clock.

Each ``verify`` mode (off, warn, hold) meets a camera that agrees, one that sees another card, and one that stays
silent; a held round's settlement waits for an operator's word, recorded in its log with who and why.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import cv2
import numpy as np
import pytest
from sqlalchemy import Engine, select

from services.bus.messages import ShoeCard, ShoeStatus
from services.controller.runner import Writer
from services.controller.witness import Witness
from services.games.pokdeng import AwaitingCard
from services.rounds import audit, checks
from services.rounds.checks import OpenCheck
from services.rounds.errors import RoundError
from services.rounds.models import Round, RoundLogEntry
from services.shoe.signing import KeyRing, new_key, sign
from tests.controller.test_table import Table
from tests.support import engine_of

CAMERA = "t1-camera"
DEAL = ["2H", "4H", "6H", "8D", "3H", "5H", "7H", "9C"]  # A 2+3, B 4+5 (Pok), C 6+7, banker 8D + 9C face down
FACE_DOWN = 7  # the banker's second card, checked when it is revealed
CROP = bytes(cv2.imencode(".jpg", np.full((40, 30, 3), 200, np.uint8))[1])


class Camera:
    """The overhead camera: sees each face-up card as it is shown — the same card, another (``sees``), or nothing
    (``silent``)."""

    def __init__(self, table: Table, sees: dict[int, str] | None = None, silent: frozenset[int] = frozenset()):
        self.table, self.sees, self.silent = table, sees or {}, silent
        self.seq = 0
        self.seen: set[int] = set()

    def message(self, card: str, seq: int | None = None, camera: str = CAMERA, ts: str | None = None) -> ShoeCard:
        if seq is None:
            self.seq += 1
        return ShoeCard(
            shoe_id=camera, boot_id="cam1", seq=seq or self.seq, ts=ts or self.table.clock.now().isoformat(),
            video_tc="00:00:00:00", deck=0, card=card, source="camera", confidence=0.97, raw="",
            crop=base64.b64encode(CROP).decode(),
        )  # fmt: skip

    def watch(self) -> None:
        current = self.table.controller.current
        for check in current.checks if current else ():
            if check.status != checks.PENDING or check.position in self.seen:
                continue
            self.seen.add(check.position)
            if check.position not in self.silent:
                self.table.controller.on_sighting(self.message(self.sees.get(check.position, check.card)))


def verified_table(database: Engine, mode: str) -> Table:
    table = Table(database)
    table.service.change_verify("t1", mode)
    table.controller = table.new_controller(camera_id=CAMERA)
    return table


def play(table: Table, camera: Camera) -> str:
    """One round dealt to its end, the camera watching; then the checks' windows run out."""
    round_id = table.open_with_bets()
    for card in DEAL:
        table.scan(card)
        camera.watch()
    spare = iter(["9S", "TS", "JS"])
    for _ in range(10):
        current = table.controller.current
        assert current is not None
        if current.finished_at is not None or current.phase == checks.VERIFYING:
            break
        if isinstance(engine_of(table.controller).expecting, AwaitingCard):
            table.scan(next(spare))
        else:
            table.tick(seconds=5)  # insurance, then each seat's decision, time out
        camera.watch()
    table.tick(seconds=3.5)  # every check's window has ended
    return round_id


def stored(table: Table, round_id: str) -> Round:
    with table.service.sessions() as session:
        round_ = session.get(Round, round_id)
        assert round_ is not None
        session.expunge(round_)
        return round_


def kinds(table: Table) -> list[str]:
    return [alert.kind for alert in table.controller.alerts if alert.kind.startswith("verify")]


def statuses(table: Table, round_id: str) -> dict[int, str]:
    return {row["position"]: row["status"] for row in audit.card_checks(table.service, round_id)}


def balances(table: Table) -> tuple[int, int]:
    return table.wallets.balance("ana")["balance"], table.wallets.balance("binh")["balance"]


@pytest.mark.parametrize("camera", ["agrees", "sees another card", "is silent"])
def test_with_verify_off_nothing_is_checked_and_the_round_settles(database: Engine, camera: str) -> None:
    table = verified_table(database, checks.OFF)
    sees = {0: "KD"} if camera == "sees another card" else {}
    watcher = Camera(table, sees, frozenset(range(9)) if camera == "is silent" else frozenset())
    round_id = play(table, watcher)
    assert stored(table, round_id).settled_at is not None
    assert statuses(table, round_id) == {} and kinds(table) == []


def test_warn_a_camera_that_agrees_settles_every_face_up_card_and_the_revealed_one(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    round_id = play(table, Camera(table))
    assert stored(table, round_id).settled_at is not None
    found = statuses(table, round_id)
    assert set(found.values()) == {checks.AGREED} and FACE_DOWN in found and len(found) >= len(DEAL)
    assert kinds(table) == []
    rows = {row["position"]: row for row in audit.card_checks(table.service, round_id)}
    assert rows[0]["camera_card"] == "2H" and rows[0]["camera_confidence"] == pytest.approx(0.97)


def test_warn_a_mismatch_alerts_the_dealer_naming_both_reads_and_the_round_still_settles(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    round_id = play(table, Camera(table, {0: "KD"}))
    assert stored(table, round_id).settled_at is not None
    assert statuses(table, round_id)[0] == checks.MISMATCH
    [alert] = [a for a in table.controller.alerts if a.kind == "verify_mismatch"]
    assert "card 1" in alert.message and "the shoe read 2H, the camera saw KD" in alert.message
    assert "check the video" in alert.message


def test_warn_a_silent_camera_alerts_once_per_card_after_its_window(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    round_id = play(table, Camera(table, silent=frozenset({FACE_DOWN})))
    assert stored(table, round_id).settled_at is not None
    assert statuses(table, round_id)[FACE_DOWN] == checks.UNSEEN
    assert kinds(table) == ["verify_unseen"]
    assert "the camera did not see the shoe's 9C" in table.controller.alerts[-1].message


def test_hold_a_camera_that_agrees_settles_the_round_when_the_last_card_is_seen(database: Engine) -> None:
    table = verified_table(database, checks.HOLD)
    camera = Camera(table, silent=frozenset({FACE_DOWN}))
    round_id = table.open_with_bets()
    for card in DEAL:
        table.scan(card)
        camera.watch()
    for _ in range(10):
        if table.controller.current.phase == checks.VERIFYING:  # type: ignore[union-attr]
            break
        if isinstance(engine_of(table.controller).expecting, AwaitingCard):
            table.scan("9S")
        else:
            table.tick(seconds=5)
        camera.watch()
    # dealt, the revealed card not seen yet: the round waits, its money untouched
    assert stored(table, round_id).settled_at is None and balances(table) == (9_700, 9_850)
    assert table.controller.state_view()["phase"] == checks.VERIFYING
    table.controller.on_sighting(camera.message("9C"))  # the camera sees it within its window
    assert stored(table, round_id).settled_at is not None and kinds(table) == []
    assert table.controller.current is not None and table.controller.current.finished_at is not None


def test_hold_a_mismatch_waits_for_an_operator_and_the_shoes_read_confirmed_settles_as_dealt(database: Engine) -> None:
    table = verified_table(database, checks.HOLD)
    round_id = play(table, Camera(table, {0: "KD"}))
    assert stored(table, round_id).settled_at is None and stored(table, round_id).phase == checks.VERIFYING
    assert balances(table) == (9_700, 9_850)  # holds of 3 × stake, nothing settled
    dealer = table.controller.dealer_view()
    assert dealer["phase"] == checks.VERIFYING and "card 1" in dealer["waiting_for"]
    assert [c["status"] for c in dealer["checks"]] == [checks.MISMATCH]
    assert "settlement waits for an operator's word" in table.controller.alerts[-1].message
    table.tick(seconds=60)
    assert stored(table, round_id).settled_at is None and stored(table, round_id).number == 1  # no next round
    table.service.confirm_read(round_id, 0, "shoe", "op1", "the video shows 2H; the camera's glare")
    table.tick(seconds=0)
    assert stored(table, round_id).settled_at is not None
    assert engine_of_round(table, round_id)[0] == "2H"
    verified = log_entries(table, round_id, checks.VERIFIED)
    assert verified == [({"type": "verified", "position": 0, "shoe": "2H", "camera": "KD", "read": "shoe",
                          "reason": "the video shows 2H; the camera's glare"}, "op1")]  # fmt: skip
    row = audit.card_checks(table.service, round_id)[0]
    assert (row["status"], row["confirmed_read"], row["confirmed_by"]) == (checks.CONFIRMED, "shoe", "op1")


def test_hold_the_cameras_read_confirmed_replaces_the_shoes_and_settles_on_it(database: Engine) -> None:
    table = verified_table(database, checks.HOLD)
    round_id = play(table, Camera(table, {0: "3D"}))  # A: 3D + 3H = 6, not 2H + 3H = 5: the same flow
    with pytest.raises(RoundError, match="still being checked|is mismatch"):
        table.service.camera_saw(round_id, 0, None)  # decided once: never again
    table.service.confirm_read(round_id, 0, "camera", "op1", "the video shows 3D")
    assert stored(table, round_id).settled_at is not None
    assert engine_of_round(table, round_id)[0] == "3D"
    assert [entry["type"] for entry, _ in log_entries(table, round_id)][-2:] == ["verified", "recalculate"]
    result = json.loads(stored(table, round_id).result or "null")
    assert result is not None
    with pytest.raises(RoundError, match="confirmed already by op1"):
        table.service.confirm_read(round_id, 0, "shoe", "op2", "second thoughts")


def test_hold_a_silent_camera_holds_the_round_and_only_the_shoes_read_can_be_confirmed(database: Engine) -> None:
    table = verified_table(database, checks.HOLD)
    round_id = play(table, Camera(table, silent=frozenset({FACE_DOWN})))
    assert statuses(table, round_id)[FACE_DOWN] == checks.UNSEEN and kinds(table) == ["verify_unseen"]
    assert stored(table, round_id).settled_at is None
    with pytest.raises(RoundError, match="the camera saw none"):
        table.service.confirm_read(round_id, FACE_DOWN, "camera", "op1", "?")
    with pytest.raises(RoundError, match="say why"):
        table.service.confirm_read(round_id, FACE_DOWN, "shoe", "op1", "  ")
    table.service.confirm_read(round_id, FACE_DOWN, "shoe", "op1", "the camera was covered; the video shows 9C")
    assert stored(table, round_id).settled_at is not None


def test_a_held_round_voided_returns_every_hold_and_posts_no_result(database: Engine) -> None:
    table = verified_table(database, checks.HOLD)
    round_id = play(table, Camera(table, {0: "KD"}))
    before = statuses(table, round_id)
    table.service.void(round_id, "the cards cannot be told from the video", "op1")
    assert balances(table) == (10_000, 10_000) and stored(table, round_id).phase == "void"
    assert statuses(table, round_id) == before  # a void opens no check, and the round no longer waits for one
    table.tick(seconds=10)
    assert table.controller.current is not None and table.controller.current.round_id != round_id


def test_a_sighting_from_another_camera_a_duplicate_or_an_old_one_confirms_nothing(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    camera = Camera(table, silent=frozenset(range(9)))
    round_id = table.open_with_bets()
    table.scan("2H")
    table.controller.on_sighting(camera.message("2H", camera="t2-camera"))
    old = (table.clock.now() - timedelta(minutes=5)).isoformat()
    table.controller.on_sighting(camera.message("2H", ts=old))
    assert statuses(table, round_id) == {0: checks.PENDING}
    assert "not this table's camera" in table.alerts()[-1]
    table.controller.on_sighting(camera.message("KC"))  # a card the shoe has not reported (yet)
    table.controller.on_sighting(camera.message("2H", seq=camera.seq))  # the same seq sent again
    assert statuses(table, round_id) == {0: checks.PENDING}
    table.tick(seconds=3.5)
    assert statuses(table, round_id) == {0: checks.MISMATCH}


def test_the_camera_may_see_a_card_before_the_shoes_message_arrives(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    camera = Camera(table, silent=frozenset(range(9)))
    round_id = table.open_with_bets()
    table.scan("2H")
    table.controller.on_sighting(camera.message("4H"))  # B's card, seen before the shoe's message came
    table.clock.advance(seconds=0.5)
    table.controller.on_sighting(camera.message("2H"))
    table.scan("4H")
    assert statuses(table, round_id) == {0: checks.AGREED, 1: checks.AGREED}
    table.tick(seconds=10)
    assert kinds(table) == []


def test_a_card_the_camera_saw_that_the_shoe_never_reported_is_alerted_once(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    camera = Camera(table)
    table.open_with_bets()
    table.controller.on_sighting(camera.message("QC"))
    table.tick(seconds=3.5)
    table.tick(seconds=3.5)
    assert kinds(table) == ["verify_unexplained"]
    assert "the camera saw QC; the shoe reported no such card" in table.alerts()[-1]


def test_the_writer_drops_a_sighting_not_signed_by_the_tables_camera(database: Engine) -> None:
    table = verified_table(database, checks.WARN)
    key, forger = new_key(CAMERA), new_key(CAMERA)
    writer = Writer(table.service, {}, lambda _t: lambda _v, _p: None, None, table.clock, KeyRing(keys=[key]))  # type: ignore[arg-type]
    writer.tables["t1"] = table.controller
    payload = Camera(table).message("2H").model_dump_json().encode()
    assert writer.sighting("t1", sign(payload, forger)) is None
    assert writer.sighting("t1", b"{not json") is None and writer.malformed == 2
    taken = writer.sighting("t1", sign(payload, key))
    assert taken is not None and taken.kind == "sighting" and taken.payload.card == "2H"


def test_witness_deadlines_are_the_checks_windows_and_an_orphans_report() -> None:
    witness, window, now = Witness(), timedelta(seconds=3), datetime(2026, 12, 4, tzinfo=UTC)
    check = OpenCheck(0, "2H", checks.PENDING, now, now + window)
    assert witness.deadline([check], window, lambda _card: True) == now + window
    assert witness.deadline([], window, lambda _card: True) is None
    message = ShoeCard(
        shoe_id=CAMERA, boot_id="cam1", seq=1, ts=now.isoformat(), video_tc="00:00:00:00", deck=0, card="QC",
        source="camera", confidence=0.9, raw="",
    )  # fmt: skip
    later = now + timedelta(seconds=5)
    assert witness.take(message, later) == ""
    assert witness.deadline([], window, lambda _card: False) == later + window  # the orphan's report
    assert witness.take(message, later) == "seq 1 was taken already"
    assert witness.unexplained([], window, later + window, lambda _card: False)[0].card == "QC"
    assert witness.unexplained([], window, later + window, lambda _card: False) == []


def engine_of_round(table: Table, round_id: str) -> list[str]:
    from services.rounds.pokdeng import pokdeng

    return [str(card) for card in pokdeng(table.service).round(round_id).cards]


def log_entries(table: Table, round_id: str, kind: str | None = None) -> list[tuple[dict[str, Any], str]]:
    with table.service.sessions() as session:
        rows = session.execute(
            select(RoundLogEntry.command, RoundLogEntry.actor)
            .where(RoundLogEntry.round_id == round_id)
            .order_by(RoundLogEntry.seq)
        ).all()
    entries = [(json.loads(command), actor) for command, actor in rows]
    return [(e, a) for e, a in entries if kind is None or e["type"] == kind]


def test_the_dealer_is_told_once_when_the_overhead_camera_goes_offline_and_when_it_is_back(database: Engine) -> None:
    table = verified_table(database, checks.HOLD)

    def status(state: str, camera: str = CAMERA, device: str = "connected") -> ShoeStatus:
        return ShoeStatus(shoe_id=camera, boot_id="cam1", state=state, device=device, ts="2026-12-04T00:00:00+00:00")  # type: ignore[arg-type]

    table.tick(seconds=0)
    table.controller.on_camera_status(status("online"))
    assert kinds(table) == [] and table.controller.dealer_view()["camera"] == "online"
    table.controller.on_camera_status(status("offline"))
    table.controller.on_camera_status(status("online", device="disconnected"))  # still no picture
    table.controller.on_camera_status(status("online", camera="t2-camera"))  # not this table's
    assert kinds(table) == ["verify_camera"] and table.controller.dealer_view()["camera"] == "offline"
    assert "is offline: it checks no card (settlement waits for an operator's word on each)" in table.alerts()[-1]
    table.controller.on_camera_status(status("online"))
    assert kinds(table) == ["verify_camera", "verify_camera"] and "is back" in table.alerts()[-1]


def test_a_round_settled_with_a_check_still_open_wakes_the_controller_at_its_due_time_not_before(
    database: Engine,
) -> None:
    """Found by the simulation: the next round waited for the check, but the result pause's deadline, long past,
    kept the controller waking (a spin) until the check's window ended."""
    table = verified_table(database, checks.WARN)
    camera = Camera(table, silent=frozenset({FACE_DOWN}))
    table.open_with_bets()
    for card in DEAL:
        table.scan(card)
        camera.watch()
    while table.controller.current is not None and table.controller.current.finished_at is None:
        if isinstance(engine_of(table.controller).expecting, AwaitingCard):
            table.scan("9S")
        else:
            table.tick(seconds=5)
        camera.watch()
    [pending] = [c for c in table.controller.current.checks if c.status == checks.PENDING]  # type: ignore[union-attr]
    table.tick(seconds=2)  # past the result pause (1 s), within the check's window (3 s)
    assert table.controller.next_deadline() == pending.due_at > table.clock.now()
    table.tick(seconds=1.5)
    assert kinds(table) == ["verify_unseen"] and table.controller.next_deadline() is not None


def test_a_cameras_misread_naming_a_card_later_dealt_face_down_is_not_shown_before_the_reveal(
    database: Engine,
) -> None:
    """Found by the simulation: the camera misread 2H as 9C, 9C was then dealt face down, and the dealer console's
    list of checks still named 9C as the camera's read."""
    table = verified_table(database, checks.WARN)
    camera = Camera(table, silent=frozenset(range(9)))
    round_id = table.open_with_bets()
    table.scan("2H")
    table.controller.on_sighting(camera.message("9C"))
    table.tick(seconds=3.5)
    assert statuses(table, round_id)[0] == checks.MISMATCH
    assert table.controller.dealer_view()["checks"][0]["camera_card"] == "9C"  # not dealt: nothing to hide
    table.scan(*DEAL[1:])  # … the banker's second card, 9C, face down
    dealer = table.controller.dealer_view()
    assert dealer["checks"][0]["camera_card"] is None and '"9C"' not in json.dumps(dealer)
    assert audit.card_checks(table.service, round_id)[0]["camera_card"] is None
    assert audit.round_audit(table.service, round_id)["checks"][0]["camera_card"] is None
