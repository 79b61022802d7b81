"""Operator and dealer tools: accounts, funding, tables, round control, void and recalculation.

Until the round controller drives rounds from the shoe, these endpoints drive the same round
service by hand; afterwards they stay as the operator's manual override.
"""

from __future__ import annotations

from fastapi import APIRouter

from services.api.deps import CurrentOperator, CurrentStaff, IdempotencyKey, ServicesDep
from services.api.schemas import (
    CardIn,
    DealersOut,
    MoneyIn,
    OpenRoundIn,
    PlayerIn,
    RecalculateIn,
    TableIn,
    TimeoutIn,
    TokenOut,
    VoidIn,
    WalletOut,
)
from services.cards import Card
from services.rounds.adapters import AppliedOut, applied_out

router = APIRouter(prefix="/v1/operator", tags=["operator"])


@router.post("/players", status_code=201)
def create_player(body: PlayerIn, _operator: CurrentOperator, services: ServicesDep) -> TokenOut:
    """Create a player, dealer or operator account; the token is shown only in this response."""
    return TokenOut(id=body.id, role=body.role, token=services.players.register(body.id, body.role))


@router.post("/players/{player_id}/token")
def replace_token(player_id: str, _operator: CurrentOperator, services: ServicesDep) -> TokenOut:
    """Revoke an account's token and issue a new one (shown only here); open streams of the old one end."""
    token = services.players.revoke(player_id)
    return TokenOut(id=player_id, role=services.players.authenticate(token).role, token=token)


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


@router.post("/tables", status_code=201)
def create_table(body: TableIn, _operator: CurrentOperator, services: ServicesDep) -> TableIn:
    services.rounds.create_table(body.id, body.currency, body.settings, body.game)
    return body


@router.get("/tables/{table_id}/dealers")
def table_dealers(table_id: str, _operator: CurrentOperator, services: ServicesDep) -> DealersOut:
    return DealersOut(table_id=table_id, dealers=services.players.dealers(table_id))


@router.put("/tables/{table_id}/dealers/{dealer_id}")
def assign_dealer(table_id: str, dealer_id: str, _operator: CurrentOperator, services: ServicesDep) -> DealersOut:
    """Give a dealer the table's console (its dealer stream); dealers see only the tables assigned to them."""
    return DealersOut(table_id=table_id, dealers=services.players.assign(table_id, dealer_id))


@router.delete("/tables/{table_id}/dealers/{dealer_id}")
def unassign_dealer(table_id: str, dealer_id: str, _operator: CurrentOperator, services: ServicesDep) -> DealersOut:
    """Take the table from the dealer: an open console stream of theirs ends within seconds."""
    return DealersOut(table_id=table_id, dealers=services.players.unassign(table_id, dealer_id))


@router.post("/tables/{table_id}/rounds", status_code=201)
def open_round(table_id: str, body: OpenRoundIn, _staff: CurrentStaff, services: ServicesDep) -> dict[str, str]:
    round_id = services.rounds.open_round(table_id, body.video_ref)
    services.notify(round_id)
    return {"round_id": round_id}


@router.post("/rounds/{round_id}/close-betting")
def close_betting(round_id: str, staff: CurrentStaff, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.close_window(round_id, staff.id, kind="betting")
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/cards")
def deal(round_id: str, body: CardIn, staff: CurrentStaff, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.deal(round_id, Card.from_code(body.card), staff.id)
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/close-insurance")
def close_insurance(round_id: str, staff: CurrentStaff, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.close_window(round_id, staff.id, kind="insurance")
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/timeout")
def end_window(round_id: str, body: TimeoutIn, staff: CurrentStaff, services: ServicesDep) -> AppliedOut:
    """End the round's open window now (of that seat, if given), as if its time had run out."""
    applied = services.rounds.close_window(round_id, staff.id, seat=body.seat)
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/void")
def void(round_id: str, body: VoidIn, operator: CurrentOperator, services: ServicesDep) -> AppliedOut:
    applied = services.rounds.void(round_id, body.reason, operator.id)
    services.notify(round_id)
    return applied_out(applied)


@router.post("/rounds/{round_id}/recalculate")
def recalculate(
    round_id: str, body: RecalculateIn, operator: CurrentOperator, services: ServicesDep
) -> dict[str, dict[str, int]]:
    """Correct misread cards from the video; only the difference is posted. Refused if the flow would change."""
    cards = {int(index): Card.from_code(code) for index, code in body.cards.items()}
    adjustments = services.rounds.recalculate(round_id, cards, body.video_ref, operator.id)
    services.notify(round_id)
    return {"adjustments": adjustments}
