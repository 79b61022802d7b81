"""Four eyes on money after settlement: corrections and voids of settled rounds are proposed by one operator and
applied only when a different operator approves; the preview is what gets posted; every step is audited."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import Engine

from services.cards import Card
from services.cli import build_parser, main
from services.rounds import players
from tests.api.conftest import Studio
from tests.api.test_api import bet, card, open_round
from tests.controller.test_controller_kills import subprocess_url

# A 5H 2D=7 · B 2H TD=2 · C KD 3C=3 · banker 9S 4S=3 (a 9 up: insurance); A stands, B draws 7D (9), C draws 8H
# (1), the banker draws AC (4): A and B beat the banker, C loses. Shoe index 8 is B's third card.
CARDS = "5H 2H KD 9S 2D TD 3C 4S".split()


def post(studio: Studio, who: str, path: str, body: object = None) -> Any:
    return studio.post(who, path, body)


def settled_round(studio: Studio, keys: str = "f") -> str:
    """A round of CARDS settled: ana 100 on seat B, binh 50 against seat C (bets keyed ``keys`` 1 and 2)."""
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "player", "seat": "B", "stake": 100}], f"{keys}1").status_code == 201
    assert bet(studio, "binh", round_id, [{"side": "banker", "seat": "C", "stake": 50}], f"{keys}2").status_code == 201
    post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in CARDS:
        card(studio, round_id, code)
    post(studio, "dealer", f"/v1/operator/rounds/{round_id}/close-insurance")
    for extra in ("6C", "7D", "8H", "AC"):
        state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("chai")).json()
        if state["phase"] == "settled":
            break
        if state.get("decision"):
            post(studio, "dealer", f"/v1/operator/rounds/{round_id}/timeout", {"seat": state["decision"]["seat"]})
            continue
        card(studio, round_id, extra)
    assert studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("chai")).json()["phase"] == "settled"
    return round_id


def balances(studio: Studio) -> dict[str, int]:
    return {who: studio.client.get("/v1/wallet", headers=studio.auth(who)).json()["balance"] for who in ("ana", "binh")}


def test_a_correction_is_previewed_proposed_and_posted_only_when_a_second_operator_approves(studio: Studio) -> None:
    round_id = settled_round(studio)
    fix = {"cards": {"8": "2C"}}  # B's third card was 2C on the video, not 7D: B has 4, a tie with the banker
    preview = post(studio, "op", f"/v1/operator/rounds/{round_id}/preview", fix)
    assert preview.status_code == 200, preview.text
    before = balances(studio)
    proposed = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "correct",
                                                             "video_ref": "cam2@00:00:31"} | fix)  # fmt: skip
    assert proposed.status_code == 201, proposed.text
    proposal = proposed.json()
    assert proposal["status"] == "pending" and proposal["preview"] == preview.json()
    assert proposal["proposed"]["by"] == "op" and proposal["proposed"]["from"] and proposal["decided"] is None
    assert balances(studio) == before  # nothing moves on a proposal
    direct = post(studio, "op", f"/v1/operator/rounds/{round_id}/recalculate", fix | {"video_ref": "v"})
    assert direct.status_code == 409 and direct.json()["code"] == "four_eyes_required", direct.text
    mine = post(studio, "op", f"/v1/operator/proposals/{proposal['id']}/approve")
    assert mine.status_code == 403 and mine.json()["code"] == "four_eyes", mine.text
    approved = post(studio, "op2", f"/v1/operator/proposals/{proposal['id']}/approve")
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "applied" and approved.json()["decided"]["by"] == "op2"
    after = balances(studio)
    expected = {p: change["adjustment"] for p, change in preview.json()["players"].items()}
    assert {p: after[p] - before[p] for p in after} == {p: expected.get(p, 0) for p in after}  # as previewed
    assert expected == {"ana": -100, "binh": 0}  # ana's win on B becomes a tie
    again = post(studio, "op2", f"/v1/operator/proposals/{proposal['id']}/approve")
    assert again.status_code == 409 and "applied already" in again.json()["message"]
    record = studio.client.get(f"/v1/operator/rounds/{round_id}", headers=studio.auth("op")).json()
    assert record["state"] == "corrected" and record["log"][-1]["actor"] == f"#{proposal['id']} approved by op2"


def test_a_rejected_proposal_changes_nothing_and_says_why(studio: Studio) -> None:
    round_id = settled_round(studio)
    before = balances(studio)
    proposed = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "x"})
    assert proposed.status_code == 201, proposed.text
    duplicate = post(studio, "op2", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "y"})
    assert duplicate.status_code == 409 and "pending" in duplicate.json()["message"]
    rejected = post(studio, "op2", f"/v1/operator/proposals/{proposed.json()['id']}/reject", {"reason": "video ok"})
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["status"] == "rejected" and rejected.json()["decided"]["reason"] == "video ok"
    assert balances(studio) == before
    listed = studio.client.get("/v1/operator/proposals?status=rejected", headers=studio.auth("op")).json()
    assert [p["id"] for p in listed] == [proposed.json()["id"]]


def test_the_void_of_a_settled_round_needs_a_second_operator_and_reverses_every_result(studio: Studio) -> None:
    start = balances(studio)
    round_id = settled_round(studio)
    direct = post(studio, "op", f"/v1/operator/rounds/{round_id}/void", {"reason": "dealing error"})
    assert direct.status_code == 409 and direct.json()["code"] == "four_eyes_required", direct.text
    proposed = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void",
                                                             "reason": "dealing error on the video"})  # fmt: skip
    preview = proposed.json()["preview"]["players"]
    assert {p: c["after"] for p, c in preview.items()} == dict.fromkeys(preview, 0)
    assert post(studio, "op2", f"/v1/operator/proposals/{proposed.json()['id']}/approve").status_code == 200
    assert balances(studio) == start  # every result reversed
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("chai")).json()
    assert state["phase"] == "void"
    # an unsettled round is voided at once, by one operator
    second = open_round(studio)
    assert post(studio, "op", f"/v1/operator/rounds/{second}/void", {"reason": "table incident"}).status_code == 200


def test_a_correction_that_changes_the_flow_is_refused_and_only_a_void_is_offered(studio: Studio) -> None:
    round_id = settled_round(studio)
    pok = {"cards": {"7": "KS"}}  # the banker's second card a K: 9 + 0 is Pok 9, the round would have ended early
    refused = post(studio, "op", f"/v1/operator/rounds/{round_id}/preview", pok)
    assert refused.status_code == 409 and refused.json()["message"].endswith("void it"), refused.text
    proposal = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "correct",
                                                             "video_ref": "v"} | pok)  # fmt: skip
    assert proposal.status_code == 409 and proposal.json()["message"].endswith("void it"), proposal.text
    void = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "pok"})
    assert void.status_code == 201


def test_a_proposal_against_a_round_that_changed_since_is_refused_at_approval(studio: Studio) -> None:
    round_id = settled_round(studio)
    proposed = post(studio, "op", "/v1/operator/proposals",
                    {"round_id": round_id, "action": "correct", "cards": {"8": "2C"}, "video_ref": "v1"})  # fmt: skip
    assert proposed.status_code == 201, proposed.text
    other = post(studio, "op2", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "r"})
    assert other.status_code == 409 and "pending" in other.json()["message"]  # one pending proposal per round
    # the round changes underneath (a tool that went round the proposals): the proposal no longer fits it
    services = studio.app.state.services
    services.rounds.recalculate(round_id, {8: Card.from_code("3H")}, "v0", "script")
    stale = post(studio, "op2", f"/v1/operator/proposals/{proposed.json()['id']}/approve")
    assert stale.status_code == 409 and "has changed since" in stale.json()["message"], stale.text
    assert (
        post(studio, "op2", f"/v1/operator/proposals/{proposed.json()['id']}/reject", {"reason": "stale"}).status_code
        == 200
    )


@pytest.mark.parametrize("who", ["ana", "dealer"])
def test_only_operators_propose_preview_or_decide(studio: Studio, who: str) -> None:
    round_id = settled_round(studio)
    proposed = post(studio, "op", "/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "r"})
    pid = proposed.json()["id"]
    for path, body in [
        ("/v1/operator/proposals", {"round_id": round_id, "action": "void", "reason": "r"}),
        (f"/v1/operator/proposals/{pid}/approve", None),
        (f"/v1/operator/proposals/{pid}/reject", {"reason": "no"}),
        (f"/v1/operator/rounds/{round_id}/preview", {"cards": {"8": "2C"}}),
        (f"/v1/operator/rounds/{round_id}/recalculate", {"cards": {"8": "2C"}, "video_ref": "v"}),
    ]:
        response = post(studio, who, path, body)
        assert response.status_code == 403 and response.json()["code"] == "forbidden", (path, response.text)
    assert studio.client.get("/v1/operator/proposals", headers=studio.auth(who)).status_code == 403
    assert studio.client.get(f"/v1/operator/proposals/{pid}").status_code == 401


def test_the_cli_proposes_and_a_second_operator_approves(
    studio: Studio, database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each operator acts with their own token, as on the API: four eyes from the command line are two tokens."""
    round_id = settled_round(studio)
    url = ["--database", subprocess_url(database)]
    op, op2, ana = (["--token", studio.tokens[who]] for who in ("op", "op2", "ana"))
    assert main(["ops", "correct", round_id, "--card", "8=2C", "--preview", *op, *url]) == 0
    assert json.loads(capsys.readouterr().out)["players"]["ana"]["adjustment"] == -100
    assert main(["ops", "correct", round_id, "--card", "8=2C", "--video-ref", "cam@1", *op, *url]) == 0
    proposal = json.loads(capsys.readouterr().out)
    assert proposal["status"] == "pending" and proposal["proposed"]["from"].startswith("cli@")
    assert main(["ops", "approve", str(proposal["id"]), *op, *url]) == 1
    assert "another operator decides it" in capsys.readouterr().err
    assert main(["ops", "approve", str(proposal["id"]), *ana, *url]) == 1
    assert "'ana' is not an operator" in capsys.readouterr().err
    assert main(["ops", "approve", str(proposal["id"]), "--token", "forged", *url]) == 1
    capsys.readouterr()
    assert main(["ops", "approve", str(proposal["id"]), *op2, *url]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "applied"
    assert main(["ops", "proposals", "--status", "applied", *url]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)] == [proposal["id"]]
    assert main(["ops", "void", round_id, "--reason", "video", *op, *url]) == 0  # settled: a proposal, not a void
    assert json.loads(capsys.readouterr().out)["status"] == "pending"
    opened = open_round(studio)
    assert main(["ops", "void", opened, "--reason", "table incident", *op, *url]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "void"  # not settled: at once, by one operator


def test_a_round_that_changes_while_a_proposal_is_made_refuses_the_proposal(
    studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preview is computed before the proposal is stored: a change in between would leave a stale preview."""
    round_id = settled_round(studio)
    rounds = studio.app.state.services.rounds
    real = rounds.preview_correction

    def meanwhile(changed: str, cards: dict[int, Card]) -> dict[str, Any]:
        preview: dict[str, Any] = real(changed, cards)
        rounds.recalculate(changed, {8: Card.from_code("3H")}, "v0", "script")  # another change lands first
        return preview

    monkeypatch.setattr(rounds, "preview_correction", meanwhile)
    proposal = post(studio, "op", "/v1/operator/proposals",
                    {"round_id": round_id, "action": "correct", "cards": {"8": "2C"}, "video_ref": "v1"})  # fmt: skip
    assert proposal.status_code == 409 and "changed while the proposal was being made" in proposal.json()["message"]
    assert studio.client.get("/v1/operator/proposals", headers=studio.auth("op")).json() == []


def test_a_token_never_reads_as_an_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """A random token may begin with '-' (one in 64): the CLI would take it for an option after ``--token``."""
    monkeypatch.setattr(players.secrets, "token_urlsafe", lambda size: "-" + "x" * 42)
    token = players.new_token()
    args = build_parser("ops").parse_args(["ops", "approve", "7", "--token", token])
    assert args.token == token
