"""Trust on the HTTP side, tried as an attacker with a staff token would: a dealer acts only at their own tables; no
token deals a card (a card by hand is two operators' word, journaled); four eyes that one person cannot fake; every
refusal said and journaled in the staff log."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import Engine, select

from services.cli import main
from services.journal.models import ShoeJournal
from services.rounds.players import PlayerService
from tests.api.conftest import Studio
from tests.api.test_api import SPEC_CARDS, bet, card, open_round
from tests.api.test_four_eyes import settled_round
from tests.controller.test_controller_kills import subprocess_url


def post(studio: Studio, who: str, path: str, body: object = None) -> Any:
    return studio.post(who, path, body)


def staff_log(studio: Studio, who: str = "admin", **query: str) -> list[dict[str, Any]]:
    response = studio.client.get("/v1/operator/staff-log", params=query, headers=studio.auth(who))
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()
    return events


def second_table(studio: Studio, table: str = "t2", **settings: object) -> None:
    body = {"id": table, "allow_return_over_100": True} | settings
    assert post(studio, "op", "/v1/operator/tables", body).status_code == 201


# ---- 1. a dealer acts only at the tables assigned to them --------------------------------------------------


def test_a_dealer_of_one_table_cannot_run_another_tables_round_and_each_try_is_journaled(studio: Studio) -> None:
    second_table(studio)
    players: PlayerService = studio.services.players
    studio.tokens["d2"] = players.register("d2", "dealer")
    players.assign("t2", "d2")
    round_id = open_round(studio)  # t1's, by its own dealer
    tries = [
        ("/v1/operator/tables/t1/rounds", {}),
        (f"/v1/operator/rounds/{round_id}/close-betting", None),
        (f"/v1/operator/rounds/{round_id}/close-insurance", None),
        (f"/v1/operator/rounds/{round_id}/timeout", {"seat": "A"}),
    ]
    for path, body in tries:
        refused = post(studio, "d2", path, body)
        assert (refused.status_code, refused.json()["code"]) == (403, "not_your_table"), (path, refused.text)
        assert "d2 is not assigned to table t1" in refused.json()["message"]
    stream = studio.client.get("/v1/tables/t1/dealer/stream?changes=1", headers=studio.auth("d2"))
    assert (stream.status_code, stream.json()["code"]) == (403, "not_your_table")
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["phase"] == "betting"  # nothing of it happened
    refusals = [event for event in staff_log(studio) if event["action"] == "refused"]
    assert len(refusals) == len(tries) + 1
    assert {(event["actor"], event["actor_role"], event["subject"]) for event in refusals} >= {
        ("d2", "dealer", round_id), ("d2", "dealer", "t1"),
    }  # fmt: skip
    assert all("not_your_table" in event["detail"] and event["address"] for event in refusals)
    # its own table's dealer and any operator may
    assert post(studio, "d2", "/v1/operator/tables/t2/rounds", {}).status_code == 201
    assert post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-betting").status_code == 200
    assert post(studio, "op", "/v1/operator/tables/t2/rounds", {}).status_code in (201, 409)  # one open at a time


def test_a_dealer_taken_off_a_table_is_refused_there_at_once(studio: Studio) -> None:
    round_id = open_round(studio)
    assert studio.client.delete("/v1/operator/tables/t1/dealers/dealer", headers=studio.auth("op")).status_code == 200
    refused = post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    assert refused.status_code == 403 and refused.json()["code"] == "not_your_table"
    assigned = [(e["action"], e["subject"], e["detail"]) for e in staff_log(studio, subject="dealer")]
    assert ("table_unassigned", "dealer", "t1") in assigned


# ---- 2. cards come from devices --------------------------------------------------------------------------


def test_no_token_deals_a_card_over_http(studio: Studio) -> None:
    round_id = open_round(studio)
    post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for who in ("dealer", "op", "admin", "ana"):
        response = post(studio, who, f"/v1/operator/rounds/{round_id}/cards", {"card": "AS"})
        assert response.status_code in (404, 405), (who, response.text)
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["hands"]["A"]["cards"] == []
    assert "/v1/operator/rounds/{round_id}/cards" not in studio.client.get("/openapi.json").json()["paths"]


def dealing_round(studio: Studio) -> str:
    """A t1 round with ana on seat A, betting closed, waiting for its first card."""
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 100}], "m1").status_code == 201
    assert post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-betting").status_code == 200
    return round_id


def propose_card(studio: Studio, who: str, round_id: str, code: str, reason: str = "the reader failed") -> Any:
    return post(studio, who, "/v1/operator/proposals", {"action": "card", "round_id": round_id, "card": code,
                                                        "reason": reason})  # fmt: skip


def test_a_card_by_hand_is_refused_where_the_table_does_not_allow_it(studio: Studio) -> None:
    round_id = dealing_round(studio)
    refused = propose_card(studio, "op", round_id, "5H")
    assert refused.status_code == 409 and refused.json()["code"] == "manual_card_refused"
    assert "does not take cards by hand" in refused.json()["message"]
    tables = studio.client.get("/v1/operator/tables", headers=studio.auth("op")).json()
    assert tables[0]["manual_cards"] is False  # off by default
    dealer = propose_card(studio, "dealer", round_id, "5H")
    assert dealer.status_code == 403  # a dealer proposes nothing


def test_a_card_by_hand_is_dealt_on_a_second_operators_word_and_journaled_with_both_names(studio: Studio) -> None:
    changed = studio.client.patch("/v1/operator/tables/t1", json={"manual_cards": True}, headers=studio.auth("op"))
    assert changed.status_code == 200 and changed.json()["manual_cards"] is True
    round_id = dealing_round(studio)
    proposal = propose_card(studio, "op", round_id, "5H", "shoe reader fault E3 at seat A's first card")
    assert proposal.status_code == 201, proposal.text
    assert proposal.json()["details"]["text"] == "seat A's first card"
    mine = post(studio, "op", f"/v1/operator/proposals/{proposal.json()['id']}/approve")
    assert mine.status_code == 403 and mine.json()["code"] == "four_eyes"
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["hands"]["A"]["cards"] == []  # nothing dealt on one operator's word
    approved = post(studio, "op2", f"/v1/operator/proposals/{proposal.json()['id']}/approve")
    assert approved.status_code == 200 and approved.json()["status"] == "applied", approved.text
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["hands"]["A"]["cards"] == ["5H"]
    with studio.services.rounds.sessions() as session:
        [entry] = session.scalars(select(ShoeJournal).where(ShoeJournal.round_id == round_id)).all()
    assert (entry.shoe_id, entry.source, entry.card, entry.disposition) == ("manual", "manual", "5H", "dealt")
    assert "proposed by op, approved by op2: shoe reader fault E3" in entry.reason
    record = studio.client.get(f"/v1/operator/rounds/{round_id}", headers=studio.auth("op")).json()
    assert record["log"][-1]["actor"] == f"manual #{proposal.json()['id']} by op2"
    # the round goes on from the shoe: the next card is seat B's
    for code in SPEC_CARDS[1:]:
        card(studio, round_id, code)
    assert studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()["phase"] == "insurance"


def test_a_face_down_card_or_a_card_the_round_no_longer_waits_for_is_never_entered_by_hand(studio: Studio) -> None:
    studio.client.patch("/v1/operator/tables/t1", json={"manual_cards": True}, headers=studio.auth("op"))
    round_id = dealing_round(studio)
    for code in SPEC_CARDS[:7]:  # up to the banker's second card, face down
        card(studio, round_id, code)
    face_down = propose_card(studio, "op", round_id, "5C")
    assert face_down.status_code == 409 and "face down" in face_down.json()["message"]
    assert "5C" not in str(studio.client.get("/v1/operator/proposals", headers=studio.auth("op2")).json())
    # a proposal the shoe overtakes is refused at approval: the round has moved on
    other = dealing_round_on(studio, "t3")
    proposal = propose_card(studio, "op", other, "KD")
    assert proposal.status_code == 201
    card(studio, other, "KD")
    late = post(studio, "op2", f"/v1/operator/proposals/{proposal.json()['id']}/approve")
    assert late.status_code == 409 and "changed since" in late.json()["message"]
    refused = propose_card(studio, "op", other, "KD")  # and the same card twice is refused when proposed
    assert refused.status_code == 409 and "already dealt" in refused.json()["message"]
    bad = propose_card(studio, "op", other, "ZZ")
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_card"
    no_reason = propose_card(studio, "op", other, "2D", " ")
    assert no_reason.status_code == 409 and "needs a reason" in no_reason.json()["message"]


def dealing_round_on(studio: Studio, table: str) -> str:
    second_table(studio, table, manual_cards=True)
    round_id: str = post(studio, "op", f"/v1/operator/tables/{table}/rounds", {}).json()["round_id"]
    assert post(studio, "op", f"/v1/operator/rounds/{round_id}/close-betting").status_code == 200
    return round_id


# ---- 3. four eyes that one person cannot fake --------------------------------------------------------------


def test_an_operator_cannot_make_a_second_operator_or_take_over_anothers_token(studio: Studio) -> None:
    made = post(studio, "op", "/v1/operator/players", {"id": "sock", "role": "operator"})
    assert made.status_code == 403 and made.json()["code"] == "admin_only"
    for role in ("dealer", "admin"):
        assert post(studio, "op", "/v1/operator/players", {"id": "sock", "role": role}).status_code == 403
    taken = post(studio, "op", "/v1/operator/players/op2/token")
    assert taken.status_code == 403 and taken.json()["code"] == "admin_only"
    assert studio.client.get("/v1/operator/me", headers=studio.auth("op2")).status_code == 200  # op2 still signs in
    player = post(studio, "op", "/v1/operator/players", {"id": "dana"})
    assert player.status_code == 201 and player.json()["role"] == "player"  # operators still make players
    own = post(studio, "op", "/v1/operator/players/op/token")
    assert own.status_code == 200
    assert studio.client.get("/v1/operator/me", headers=studio.auth("op")).status_code == 401  # the old one is gone
    studio.tokens["op"] = own.json()["token"]
    events = staff_log(studio)
    refused = [event for event in events if event["action"] == "refused"]
    assert [event["actor"] for event in refused] == ["op"] * 4
    assert any("POST /v1/operator/players/op2/token" in event["detail"] for event in refused)
    assert ("token_reissued", "op", "op") in {(e["action"], e["actor"], e["subject"]) for e in events}


def test_an_account_made_after_a_proposal_can_neither_approve_nor_reject_it(studio: Studio) -> None:
    round_id = settled_round(studio)
    proposal = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "x"})
    assert proposal.status_code == 201
    studio.clock.advance(seconds=30)
    studio.tokens["late"] = studio.services.players.register("late", "operator")  # the database's own tools: confirmed
    for decision, body in (("approve", None), ("reject", {"reason": "no"})):
        refused = post(studio, "late", f"/v1/operator/proposals/{proposal.json()['id']}/{decision}", body)
        assert refused.status_code == 403 and refused.json()["code"] == "four_eyes", refused.text
        assert "made after proposal" in refused.json()["message"]
    approved = post(studio, "op2", f"/v1/operator/proposals/{proposal.json()['id']}/approve")
    assert approved.status_code == 200 and approved.json()["status"] == "applied"


def test_one_admin_alone_makes_no_operator_who_moves_money_nor_borrows_a_real_one(studio: Studio) -> None:
    """The attack run's two ways past four eyes for a lone admin: two operators made to order, or two real operators'
    tokens taken. Each token an admin issues to an operator decides nothing until a second admin confirms it."""
    round_id = settled_round(studio)
    for name in ("opA", "opB"):
        made = post(studio, "admin", "/v1/operator/players", {"id": name, "role": "operator"})
        assert made.status_code == 201
        studio.tokens[name] = made.json()["token"]
    proposed = post(studio, "opA", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "x"})
    assert proposed.status_code == 403 and proposed.json()["code"] == "unconfirmed"
    assert "opA's token was issued by admin" in proposed.json()["message"]
    mine = post(studio, "admin", "/v1/operator/players/opA/confirm")
    assert mine.status_code == 403 and "admin issued opA's token" in mine.json()["message"]
    # taking over real operators: op2's token reissued by the admin can approve nothing either
    proposal = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "y"})
    assert proposal.status_code == 201
    taken = post(studio, "admin", "/v1/operator/players/op2/token")
    assert taken.status_code == 200
    studio.tokens["op2"] = taken.json()["token"]
    borrowed = post(studio, "op2", f"/v1/operator/proposals/{proposal.json()['id']}/approve")
    assert borrowed.status_code == 403 and borrowed.json()["code"] == "unconfirmed"
    rotated = post(studio, "op2", "/v1/operator/players/op2/token")  # rotating it oneself confirms nothing
    studio.tokens["op2"] = rotated.json()["token"]
    assert post(studio, "op2", f"/v1/operator/proposals/{proposal.json()['id']}/approve").status_code == 403
    waiting = studio.client.get("/v1/operator/staff", headers=studio.auth("admin")).json()
    assert {row["id"] for row in waiting if row["awaiting_confirmation"]} == {"opA", "opB", "op2"}
    # a second admin's word makes op2 an approver again
    studio.tokens["admin2"] = studio.services.players.register("admin2", "admin")
    confirmed = post(studio, "admin2", "/v1/operator/players/op2/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["confirmed_by"] == "admin2"
    again = post(studio, "admin2", "/v1/operator/players/op2/confirm")
    assert again.status_code == 422 and "confirmed already" in again.json()["message"]
    approved = post(studio, "op2", f"/v1/operator/proposals/{proposal.json()['id']}/approve")
    assert approved.status_code == 200 and approved.json()["status"] == "applied", approved.text
    # nor make a second admin to vouch for it: an admin an admin made manages no staff until another admin confirms it
    made = post(studio, "admin", "/v1/operator/players", {"id": "sockadmin", "role": "admin"})
    studio.tokens["sockadmin"] = made.json()["token"]
    vouched = post(studio, "sockadmin", "/v1/operator/players/opA/confirm")
    assert vouched.status_code == 403 and vouched.json()["code"] == "unconfirmed"
    for path, body in (
        ("/v1/operator/players", {"id": "opC", "role": "operator"}),
        ("/v1/operator/players/op/token", {}),
    ):
        assert post(studio, "sockadmin", path, body).status_code == 403
    assert post(studio, "admin", "/v1/operator/players/sockadmin/confirm").status_code == 403  # it issued it
    assert post(studio, "admin2", "/v1/operator/players/sockadmin/confirm").status_code == 200  # a second person
    assert post(studio, "sockadmin", "/v1/operator/players/opA/confirm").status_code == 200
    log = staff_log(studio)
    assert ("account_confirmed", "op2", "admin2", "admin") in {
        (e["action"], e["subject"], e["actor"], e["detail"]) for e in log
    }
    assert any(e["action"] == "refused" and "unconfirmed" in e["detail"] for e in log)


def test_refusals_of_any_kind_to_staff_are_journaled_and_table_changes_logged(studio: Studio) -> None:
    round_id = settled_round(studio)
    direct = post(studio, "op", f"/v1/operator/rounds/{round_id}/void", {"reason": "alone"})
    assert direct.status_code == 409 and direct.json()["code"] == "four_eyes_required"
    studio.client.patch("/v1/operator/tables/t1", json={"manual_cards": True}, headers=studio.auth("op"))
    crafted = post(studio, "dealer", "/v1/operator/rounds/t1-1%0Aforged/close-betting")
    assert crafted.status_code in (403, 404)
    log = staff_log(studio)
    assert any(e["action"] == "refused" and "four_eyes_required" in e["detail"] for e in log)
    changed = [e for e in log if e["action"] == "table_changed"]
    assert changed and changed[0]["subject"] == "t1" and '"manual_cards": true' in changed[0]["detail"]
    assert all("\n" not in e["subject"] + e["detail"] for e in log)  # a crafted line break is not written
    case = post(studio, "admin", "/v1/operator/players", {"id": "OP2", "role": "dealer"})
    assert case.status_code == 422 and "already registered (as 'op2')" in case.json()["message"]


def test_an_admin_manages_staff_but_neither_proposes_nor_approves_nor_moves_money(studio: Studio) -> None:
    round_id = settled_round(studio)
    proposal = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "x"})
    for path, body in (
        (f"/v1/operator/proposals/{proposal.json()['id']}/approve", None),
        ("/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "y"}),
        ("/v1/operator/players/ana/deposit", {"amount": 5}),
        (f"/v1/operator/rounds/{round_id}/void", {"reason": "z"}),
    ):
        refused = studio.post("admin", path, body, key="k")
        assert refused.status_code == 403, (path, refused.text)  # type: ignore[attr-defined]
    made = post(studio, "admin", "/v1/operator/players", {"id": "op3", "role": "operator"})
    assert made.status_code == 201
    reissued = post(studio, "admin", "/v1/operator/players/op3/token")
    assert reissued.status_code == 200 and reissued.json()["token"] != made.json()["token"]
    assigned = studio.client.put("/v1/operator/tables/t1/dealers/dealer", headers=studio.auth("admin"))
    assert assigned.status_code == 200
    log = staff_log(studio, "op")  # operators read the staff log too
    assert [(e["action"], e["subject"], e["actor"]) for e in log if e["action"] != "refused"][:2] == [
        ("token_reissued", "op3", "admin"), ("account_created", "op3", "admin"),
    ]  # fmt: skip
    assert studio.client.get("/v1/operator/staff-log", headers=studio.auth("dealer")).status_code == 403
    assert studio.client.get("/v1/operator/staff-log", headers=studio.auth("ana")).status_code == 403


def test_the_command_line_enters_a_card_by_hand_on_two_operators_tokens(
    studio: Studio, database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    studio.client.patch("/v1/operator/tables/t1", json={"manual_cards": True}, headers=studio.auth("op"))
    round_id = dealing_round(studio)
    url = ["--database", subprocess_url(database)]
    op, op2, dealer = (["--token", studio.tokens[who]] for who in ("op", "op2", "dealer"))
    assert main(["ops", "card", round_id, "--card", "5h", "--reason", "reader fault", *dealer, *url]) == 1
    assert "'dealer' is not an operator" in capsys.readouterr().err
    assert main(["ops", "card", round_id, "--card", "5h", "--reason", "reader fault", *op, *url]) == 0
    proposal = json.loads(capsys.readouterr().out)
    assert proposal["details"]["card"] == "5H" and proposal["status"] == "pending"
    assert main(["ops", "approve", str(proposal["id"]), *op, *url]) == 1
    assert "another operator decides it" in capsys.readouterr().err
    assert main(["ops", "approve", str(proposal["id"]), *op2, *url]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "applied"
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["hands"]["A"]["cards"] == ["5H"]
    with pytest.raises(SystemExit):
        main(["ops", "card", round_id, "--card", "XX", "--reason", "r", *op, *url])
    assert "XX" in capsys.readouterr().err


def test_a_forwarded_for_header_names_no_address_unless_its_proxy_is_trusted(studio: Studio, database: Engine) -> None:
    import threading

    import httpx
    import uvicorn

    from services.api.app import create_app
    from services.cli.api import proxies
    from tests.conftest import free_port
    from tests.support import wait_until

    round_id = settled_round(studio)
    for trusted, expected in (("", "127.0.0.1"), ("127.0.0.1", "10.9.9.9")):
        app = create_app(database)
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning", **proxies(trusted))
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        wait_until(lambda server=server: server.started, 15, "uvicorn")  # type: ignore[misc]
        url = f"http://127.0.0.1:{server.config.port}/v1/operator/proposals"
        body = {"round_id": round_id, "action": "void", "reason": "x"}
        made = httpx.post(url, json=body, headers=studio.auth("op") | {"X-Forwarded-For": "10.9.9.9"})
        assert made.status_code == 201, made.text
        assert made.json()["proposed"]["from"] == expected
        httpx.post(f"{url}/{made.json()['id']}/reject", json={"reason": "test"}, headers=studio.auth("op2"))
        server.should_exit = True
        thread.join(timeout=10)


def test_a_token_an_admin_issued_does_nothing_at_all_until_a_second_admin_confirms_it(
    studio: Studio, caplog: pytest.LogCaptureFixture
) -> None:
    """The second attack run: an unconfirmed operator still funded players, voided rounds and changed tables; an admin
    took over a dealer's and a player's tokens. Now each such token does nothing until confirmed."""
    made = post(studio, "admin", "/v1/operator/players", {"id": "opA", "role": "operator"})
    studio.tokens["opA"] = made.json()["token"]
    round_id = open_round(studio)
    for path, body in (
        ("/v1/operator/players/ana/deposit", {"amount": 10**9}),
        ("/v1/operator/players/ana/withdraw", {"amount": 10}),
        (f"/v1/operator/rounds/{round_id}/void", {"reason": "mine"}),
        ("/v1/operator/tables", {"id": "t9", "allow_return_over_100": True}),
        ("/v1/operator/players", {"id": "mule"}),
    ):
        refused = studio.post("opA", path, body, key=f"k-{path}")
        assert (refused.status_code, refused.json()["code"]) == (403, "unconfirmed"), path  # type: ignore[attr-defined]
    patched = studio.client.patch("/v1/operator/tables/t1", json={"manual_cards": True}, headers=studio.auth("opA"))
    assert patched.status_code == 403
    assert studio.client.get("/v1/wallet", headers=studio.auth("ana")).json()["balance"] == 10_000
    for who in ("dealer", "ana"):  # a dealer's and a player's token taken over
        taken = post(studio, "admin", f"/v1/operator/players/{who}/token")
        assert taken.status_code == 200
        studio.tokens[who] = taken.json()["token"]
    assert post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-betting").json()["code"] == "unconfirmed"
    slip = {"bets": [{"side": "player", "seat": "A", "stake": 100}]}
    assert studio.post("ana", f"/v1/rounds/{round_id}/bets", slip, "b").json()["code"] == "unconfirmed"  # type: ignore[attr-defined]
    waiting = {row["id"] for row in studio.client.get("/v1/operator/staff", headers=studio.auth("op")).json()
               if row["awaiting_confirmation"]}  # fmt: skip
    assert waiting == {"opA", "dealer", "ana"}
    own = post(
        studio, "ana", "/v1/operator/players/ana/token"
    )  # replacing one's own stays possible (and confirms nothing)
    assert own.status_code == 403  # a player has no staff route; it asks support
    studio.tokens["admin2"] = studio.services.players.register("admin2", "admin")
    assert post(studio, "admin2", "/v1/operator/players/ana/confirm").status_code == 200
    assert studio.post("ana", f"/v1/rounds/{round_id}/bets", slip, "b2").status_code == 201  # type: ignore[attr-defined]
    # a crafted id forges no line in the process's own log
    caplog.clear()
    post(studio, "dealer", "/v1/operator/rounds/t9-1%0A2026-12-05 INFO proposal 99 approved/close-betting")
    assert caplog.records and all("\n" not in record.getMessage() for record in caplog.records)
