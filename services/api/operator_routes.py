"""Staff tools: accounts and the staff log, funding, tables, round control, void, corrections, cards by hand.

Who may do what is ``services.rounds.staff``'s rule: a dealer acts only at the tables assigned to them, an operator
at every table, an admin on staff accounts only. Cards come from devices: no route deals one, except a card the shoe
could not read, entered by hand as an operator's proposal that a second operator approves.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from services.api.deps import (
    AnyStaff,
    CurrentAdmin,
    CurrentManager,
    CurrentOperator,
    IdempotencyKey,
    ServicesDep,
    TableStaff,
    actor_of,
)
from services.api.schemas import (
    AcknowledgeIn,
    ConfirmReadIn,
    DealersOut,
    MoneyIn,
    OpenRoundIn,
    PlayerIn,
    PreviewIn,
    ProposalIn,
    RecalculateIn,
    RejectIn,
    StaffEventOut,
    StaffOut,
    TableChangeIn,
    TableIn,
    TimeoutIn,
    TokenOut,
    VoidIn,
    WalletOut,
)
from services.cards import Card
from services.db.unit_of_work import run_transaction
from services.rounds import audit, decks, display
from services.rounds.adapters import AppliedOut, applied_out
from services.rounds.proposals import FourEyesRequiredError, Origin, Proposals
from services.rounds.video import checked_template

router = APIRouter(prefix="/v1/operator", tags=["operator"])
ProposalId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the proposal's number")]
JournalId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the shoe journal entry's number")]
CheckPosition = Annotated[int, Path(ge=0, le=255, description="the card's place in shoe order, 0-based")]
ReportId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the deck report's number")]


@router.post("/players", status_code=201)
def create_player(body: PlayerIn, manager: CurrentManager, services: ServicesDep, request: Request) -> TokenOut:
    """Create an account; the token is shown only in this response. Operators create players; staff accounts (dealer,
    operator, admin) are an admin's to create, each in the staff log."""
    token = services.players.register(body.id, body.role, by=actor_of(manager, request))
    return TokenOut(id=body.id, role=body.role, token=token)


@router.post("/players/{player_id}/token")
def replace_token(player_id: str, staff: AnyStaff, services: ServicesDep, request: Request) -> TokenOut:
    """Revoke an account's token and issue a new one (shown only here); open streams of the old one end. Staff replace
    their own; an admin anyone's (in the staff log)."""
    token = services.players.revoke(player_id, by=actor_of(staff, request))
    return TokenOut(id=player_id, role=services.players.authenticate(token).role, token=token)


@router.post("/players/{player_id}/confirm")
def confirm_operator(player_id: str, admin: CurrentAdmin, services: ServicesDep, request: Request) -> StaffOut:
    """A second admin's word on an operator's token that an admin issued (a new operator, or a token reissued): until
    then it proposes and decides nothing. The admin who issued it cannot confirm it."""
    return StaffOut(**services.players.confirm(player_id, by=actor_of(admin, request)))


@router.get("/staff")
def staff_accounts(_manager: CurrentManager, services: ServicesDep) -> list[StaffOut]:
    """Every staff account: its role, who issued its token, and (operators) who confirmed it."""
    return [StaffOut(**row) for row in services.players.staff()]


@router.get("/staff-log")
def staff_log(
    _manager: CurrentManager,
    services: ServicesDep,
    subject: Annotated[str | None, Query(max_length=64, description="only events about this account")] = None,
    before: Annotated[
        int | None, Query(ge=1, le=2**63 - 1, description="only events older than this one (paging)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[StaffEventOut]:
    """The staff log, newest first: accounts made, tokens reissued, tables given and taken, actions refused."""
    return [StaffEventOut(**event) for event in services.players.log.events(limit, subject, before)]


@router.post("/players/{player_id}/deposit")
def deposit(
    player_id: str, body: MoneyIn, key: IdempotencyKey, operator: CurrentOperator, services: ServicesDep
) -> WalletOut:
    services.players.wallet_holder(player_id)
    return WalletOut(**services.wallets.deposit(player_id, body.amount, key, operator.id))


@router.post("/players/{player_id}/withdraw")
def withdraw(
    player_id: str, body: MoneyIn, key: IdempotencyKey, operator: CurrentOperator, services: ServicesDep
) -> WalletOut:
    services.players.wallet_holder(player_id)
    return WalletOut(**services.wallets.withdraw(player_id, body.amount, key, operator.id))


@router.get("/players/{player_id}/wallet")
def player_wallet(player_id: str, _operator: CurrentOperator, services: ServicesDep) -> WalletOut:
    return WalletOut(**services.wallets.balance(player_id))


@router.get("/me")
def me(manager: CurrentManager) -> dict[str, str]:
    """Who the token signs in as (the operator pages greet them by it, and show an admin only the staff log)."""
    return {"id": manager.id, "role": manager.role}


@router.post("/tables", status_code=201)
def create_table(body: TableIn, operator: CurrentOperator, services: ServicesDep, request: Request) -> TableIn:
    """A new table (in the staff log, with whether it takes cards by hand)."""
    services.rounds.create_table(
        body.id, body.currency, body.settings, body.game, body.video_url_template, body.allow_return_over_100,
        body.wallet, body.verify, body.verify_window_ms, body.manual_cards,
    )  # fmt: skip
    if (body.overlay_delay_ms, body.language, body.result_pause_ms) != (0, "en", None):
        display.change_display(services.rounds, body.id, body.overlay_delay_ms, body.language, body.result_pause_ms)
    _logged(services, operator, request, "table_created", body.id, body.model_dump(exclude={"id"}))
    return body


def _logged(
    services: ServicesDep, operator: Any, request: Request, action: str, table_id: str, what: dict[str, Any]
) -> None:
    """A table made or changed, in the staff log (its settings decide money and which cards are trusted)."""
    said = json.dumps({key: value for key, value in what.items() if value is not None}, sort_keys=True)
    run_transaction(
        services.players.sessions,
        lambda session: services.players.log.record(session, actor_of(operator, request), action, table_id, said),
    )


@router.get("/tables")
def tables(_operator: CurrentOperator, services: ServicesDep) -> list[dict[str, Any]]:
    """Every table with its settings, the expected return of each bet the house takes (and whether an operator allowed
    one of 100 % or more), and its video recorder's link template."""
    return audit.tables(services.rounds)


@router.patch("/tables/{table_id}")
def change_table(
    table_id: str, body: TableChangeIn, operator: CurrentOperator, services: ServicesDep, request: Request
) -> dict[str, Any]:
    """Change the table's settings (from its next round; checked as at creation: a house bet returning 100 % or more
    needs ``allow_return_over_100``), its return override, where its video is watched, its overlay's delay, its
    language or how long a result stays up, its shoe + camera cross-check, or whether cards may be entered by hand."""
    audit.tables(services.rounds, table_id)  # 404 for an unknown table, whatever the body asks
    if body.video_url_template is not None:  # checked before anything is changed: all of it, or none
        checked_template(body.video_url_template)
    display.checked(body.overlay_delay_ms, body.language, body.result_pause_ms)
    if body.settings is not None or body.allow_return_over_100 is not None:
        services.rounds.change_settings(table_id, body.settings, body.allow_return_over_100)
    if body.video_url_template is not None:
        services.rounds.set_video_url_template(table_id, body.video_url_template)
    if body.overlay_delay_ms is not None or body.language is not None or body.result_pause_ms is not None:
        display.change_display(services.rounds, table_id, body.overlay_delay_ms, body.language, body.result_pause_ms)
    if "result_pause_ms" in body.model_fields_set and body.result_pause_ms is None:  # null: the controller's own
        display.default_result_pause(services.rounds, table_id)
    if body.verify is not None or body.verify_window_ms is not None:
        services.rounds.change_verify(table_id, body.verify, body.verify_window_ms)
    if body.manual_cards is not None:
        services.rounds.set_manual_cards(table_id, body.manual_cards)
    [table] = audit.tables(services.rounds, table_id)  # 404 for an unknown table
    _logged(services, operator, request, "table_changed", table_id, body.model_dump())
    return table


@router.get("/tables/{table_id}/dealers")
def table_dealers(table_id: str, _manager: CurrentManager, services: ServicesDep) -> DealersOut:
    return DealersOut(table_id=table_id, dealers=services.players.dealers(table_id))


@router.put("/tables/{table_id}/dealers/{dealer_id}")
def assign_dealer(
    table_id: str, dealer_id: str, manager: CurrentManager, services: ServicesDep, request: Request
) -> DealersOut:
    """Give a dealer the table: its console (its dealer stream) and its round controls; a dealer acts only at the
    tables assigned to them. In the staff log."""
    dealers = services.players.assign(table_id, dealer_id, by=actor_of(manager, request))
    return DealersOut(table_id=table_id, dealers=dealers)


@router.delete("/tables/{table_id}/dealers/{dealer_id}")
def unassign_dealer(
    table_id: str, dealer_id: str, manager: CurrentManager, services: ServicesDep, request: Request
) -> DealersOut:
    """Take the table from the dealer: an open console stream of theirs ends within seconds. In the staff log."""
    dealers = services.players.unassign(table_id, dealer_id, by=actor_of(manager, request))
    return DealersOut(table_id=table_id, dealers=dealers)


@router.post("/tables/{table_id}/rounds", status_code=201)
def open_round(table_id: str, body: OpenRoundIn, _staff: TableStaff, services: ServicesDep) -> dict[str, str]:
    """Open the table's next round (a dealer of the table, or an operator)."""
    round_id = services.rounds.open_round(table_id, body.video_ref)
    services.notify(round_id)
    return {"round_id": round_id}


@router.post("/rounds/{round_id}/close-betting")
def close_betting(round_id: str, staff: TableStaff, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.close_window(round_id, staff.id, kind="betting")
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/close-insurance")
def close_insurance(round_id: str, staff: TableStaff, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.close_window(round_id, staff.id, kind="insurance")
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/timeout")
def end_window(round_id: str, body: TimeoutIn, staff: TableStaff, services: ServicesDep) -> AppliedOut:
    """End the round's open window now (of that seat, if given), as if its time had run out."""
    applied = services.rounds.close_window(round_id, staff.id, seat=body.seat)
    services.notify(round_id)
    return applied_out(applied)


@router.get("/rounds")
def list_rounds(
    _operator: CurrentOperator, services: ServicesDep, query: Annotated[audit.RoundsQuery, Depends()]
) -> list[dict[str, Any]]:
    """Rounds newest first, by table, state (open, settled, void, corrected) and when they opened (UTC if no zone)."""
    return audit.rounds(services.rounds, query)


@router.get("/rounds/{round_id}")
def round_record(round_id: str, _operator: CurrentOperator, services: ServicesDep) -> dict[str, Any]:
    """A round in full for game recall: its log, every shoe message journaled for it (burns and refusals included,
    with video timecodes), its wagers and every money movement. Cards still face down are ``null`` until it ends."""
    return audit.round_audit(services.rounds, round_id)


@router.get(
    "/evidence/{journal_id}",
    response_class=Response,
    responses={200: {"content": {"image/jpeg": {}}, "description": "the card as the camera read it"}},
)
def card_evidence(journal_id: JournalId, _operator: CurrentOperator, services: ServicesDep) -> Response:
    """A camera card's crop as read (JPEG), by its shoe journal entry (``crop_url`` in a round's record)."""
    crop = audit.evidence(services.rounds, journal_id)
    return Response(crop, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/rounds/{round_id}/checks")
def card_checks(round_id: str, _operator: CurrentOperator, services: ServicesDep) -> list[dict[str, Any]]:
    """Every face-up card of the round checked against the overhead camera: the shoe's read, what the camera saw (and
    its crop, ``crop_url``), and an operator's word on a disputed one."""
    return audit.card_checks(services.rounds, round_id)


@router.post("/rounds/{round_id}/checks/{position}/confirm")
def confirm_read(
    round_id: str, position: CheckPosition, body: ConfirmReadIn, operator: CurrentOperator, services: ServicesDep
) -> AppliedOut:
    """Say which read of a disputed card is right — the shoe's, or the camera's (a correction of the dealt round; one
    that changes the deal's flow is refused: void the round). Recorded in the round's log with who and why; a round
    held for its checks settles once none is left."""
    applied = services.rounds.confirm_read(round_id, position, body.read, operator.id, body.reason)
    services.notify(round_id)
    return applied_out(applied)


@router.get(
    "/rounds/{round_id}/checks/{position}/crop",
    response_class=Response,
    responses={200: {"content": {"image/jpeg": {}}, "description": "the card as the overhead camera read it"}},
)
def check_crop(round_id: str, position: CheckPosition, _operator: CurrentOperator, services: ServicesDep) -> Response:
    """The overhead camera's crop of a checked card (JPEG)."""
    crop = services.rounds.check_crop(round_id, position)
    return Response(crop, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})


@router.post("/rounds/{round_id}/void")
def void(round_id: str, body: VoidIn, operator: CurrentOperator, services: ServicesDep) -> AppliedOut:
    """Void a round that has not settled: every hold goes back. A settled round's void needs a second operator
    (``POST /v1/operator/proposals``)."""
    applied = Proposals(services.rounds).void_unsettled(round_id, body.reason, operator.id)
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/recalculate")
def recalculate(round_id: str, body: RecalculateIn, _operator: CurrentOperator) -> None:
    """Corrections need a second operator: propose one (``POST /v1/operator/proposals``), another approves it."""
    raise FourEyesRequiredError(
        f"round {round_id}: a correction needs a second operator — propose it (POST /v1/operator/proposals)"
    )


@router.post("/rounds/{round_id}/preview")
def preview(round_id: str, body: PreviewIn, _operator: CurrentOperator, services: ServicesDep) -> dict[str, Any]:
    """What a correction would change — the result before and after, each player's net and adjustment — without
    changing anything; refused, naming why, when it would change the deal's flow (then only a void is possible)."""
    return services.rounds.preview_correction(round_id, _cards(body.cards))


@router.post("/proposals", status_code=201)
def propose(body: ProposalIn, operator: CurrentOperator, services: ServicesDep, request: Request) -> dict[str, Any]:
    """Propose a correction or the void of a settled round, or a card the shoe could not read for a live round
    (``card``, on a table that allows cards by hand); a different operator, whose account existed when it was proposed,
    approves or rejects it."""
    proposals, origin = Proposals(services.rounds), _origin(operator.id, request)
    if body.action == "void":
        return proposals.propose_void(body.round_id, body.reason, origin)
    if body.action == "card":
        return proposals.propose_card(body.round_id, Card.from_code(body.card), body.reason, origin)
    return proposals.propose_correction(body.round_id, _cards(body.cards), body.video_ref, origin)


@router.get("/proposals")
def proposals_list(
    _operator: CurrentOperator, services: ServicesDep, status: str | None = None, round_id: str | None = None
) -> list[dict[str, Any]]:
    return Proposals(services.rounds).list(status, round_id)


@router.get("/proposals/{proposal_id}")
def proposal(proposal_id: ProposalId, _operator: CurrentOperator, services: ServicesDep) -> dict[str, Any]:
    return Proposals(services.rounds).get(proposal_id)


@router.post("/proposals/{proposal_id}/approve")
def approve(
    proposal_id: ProposalId, operator: CurrentOperator, services: ServicesDep, request: Request
) -> dict[str, Any]:
    """Apply a proposal made by another operator (the proposer cannot)."""
    decided = Proposals(services.rounds).approve(proposal_id, _origin(operator.id, request))
    services.notify(decided["round_id"])
    return decided


@router.post("/proposals/{proposal_id}/reject")
def reject(
    proposal_id: ProposalId, body: RejectIn, operator: CurrentOperator, services: ServicesDep, request: Request
) -> dict[str, Any]:
    return Proposals(services.rounds).reject(proposal_id, body.reason, _origin(operator.id, request))


@router.get("/decks")
def deck_reports(
    _operator: CurrentOperator, services: ServicesDep, query: Annotated[decks.DecksQuery, Depends()]
) -> list[dict[str, Any]]:
    """Each deck reconciled when it ended, newest first: cards seen, missing and seen twice. A ``held`` report holds
    its table (no round opens) until an operator acknowledges it."""
    return decks.reports(services.rounds, query)


@router.post("/decks/{report_id}/acknowledge")
def acknowledge_deck(
    report_id: ReportId, body: AcknowledgeIn, operator: CurrentOperator, services: ServicesDep, request: Request
) -> dict[str, Any]:
    """The deck has been counted: record what was found; the table deals again."""
    return decks.acknowledge(services.rounds, report_id, body.note, _origin(operator.id, request))


def _cards(fixes: dict[str, str]) -> dict[int, Card]:
    return {int(index): Card.from_code(code) for index, code in fixes.items()}


def _origin(operator: str, request: Request) -> Origin:
    return Origin(operator, request.client.host if request.client else "unknown")
