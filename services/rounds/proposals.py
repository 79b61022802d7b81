"""Four eyes on money after settlement: a correction from the video, or the void of a settled round, is proposed by
one operator and applied only when a different operator approves it; a proposal can be rejected instead. Every step
is recorded — who, when, from where, why — and what the proposal would change is computed when it is made.

Approving is the round service's own ``recalculate`` or ``void``, under an actor that names the proposal, with the
decision recorded in the same transaction while the round and the proposal are locked: it is applied once and
marked once, or neither; two operators approving at once get one application and one refusal. A proposal made
against a round that has changed since is refused at approval: propose again on what the round is now.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.cards import Card
from services.rounds import manual
from services.rounds.clock import aware
from services.rounds.errors import ForbiddenError, NotFoundError, RoundError
from services.rounds.models import Player, Proposal, Round
from services.rounds.service import Along, RoundService, result_nets, stored_round
from services.rounds.staff import UnconfirmedError

STATUSES: Final = ("pending", "applied", "rejected")


class ProposalRefusedError(RoundError):
    code = "proposal_refused"


class FourEyesError(ForbiddenError):
    """The proposer tried to decide their own proposal."""

    code = "four_eyes"


class FourEyesRequiredError(RoundError):
    """Money after settlement moves only through a proposal and a second operator."""

    code = "four_eyes_required"


@dataclass(frozen=True)
class Origin:
    """Who acts, and from where (a client address, or ``cli@host``)."""

    operator: str
    address: str


class Proposals:
    def __init__(self, service: RoundService) -> None:
        self.service = service

    # ---- proposing ----------------------------------------------------------------------------

    def propose_void(self, round_id: str, reason: str, origin: Origin) -> dict[str, Any]:
        """The void of a settled round: every player's result is reversed."""
        if not reason.strip():
            raise ProposalRefusedError("a void needs a reason", reason="reason_needed")
        with self.service.sessions() as session:
            round_ = self._settled(session, round_id)
            result, seen = json.loads(round_.result or "{}"), round_.log_length
        nets = result_nets(result)
        preview = {"players": {p: {"before": n, "after": 0, "adjustment": -n} for p, n in sorted(nets.items())}}
        return self._propose(round_id, "void", {"reason": reason}, preview, seen, origin)

    def propose_correction(
        self, round_id: str, cards: dict[int, Card], video_ref: str, origin: Origin
    ) -> dict[str, Any]:
        """Cards corrected from the video (shoe index → card); refused, naming why, when it would change the deal's
        flow (void the round instead)."""
        if not cards:
            raise ProposalRefusedError("a correction names at least one card", reason="no_corrected_card")
        if not video_ref.strip():
            raise ProposalRefusedError(
                "a correction names the video it was read from (video_ref)", reason="video_needed"
            )
        with self.service.sessions() as session:
            seen = self._settled(session, round_id).log_length
        preview = self.service.preview_correction(round_id, cards)
        details = {"cards": {str(i): str(c) for i, c in sorted(cards.items())}, "video_ref": video_ref}
        return self._propose(round_id, "correct", details, preview, seen, origin)

    def propose_card(self, round_id: str, card: Card, reason: str, origin: Origin) -> dict[str, Any]:
        """A card the shoe could not read, entered by hand as the round's next (``services.rounds.manual``): dealt when
        a second operator approves, if the round still waits for that very card then."""
        if not reason.strip():
            message = "a card entered by hand needs a reason (why the shoe could not read it)"
            raise ProposalRefusedError(message, reason="reason_needed")
        with self.service.sessions() as session:
            round_ = stored_round(session, round_id)
            entry, seen = manual.wanted(self.service, session, round_, card), round_.log_length
        details = entry.details() | {"reason": reason}
        return self._propose(round_id, "card", details, {"deals": entry.details()}, seen, origin)

    def _propose(
        self, round_id: str, action: str, details: dict[str, Any], preview: dict[str, Any], seen: int, origin: Origin
    ) -> dict[str, Any]:
        """Record the proposal, its preview computed on the round as it was at log length ``seen``."""
        with self.service.sessions.begin() as session:
            self._operator(session, origin)
            round_ = session.scalar(select(Round).where(Round.id == round_id).with_for_update())
            assert round_ is not None  # checked settled above; rounds are never deleted
            if round_.log_length != seen:
                message = f"round {round_id} changed while the proposal was being made: propose again"
                raise ProposalRefusedError(message, reason="round_changed")
            pending = session.scalar(
                select(Proposal.id).where(Proposal.round_id == round_id, Proposal.status == "pending")
            )
            if pending is not None:
                message = f"round {round_id} has proposal #{pending} pending: decide it first"
                raise ProposalRefusedError(message, reason="proposal_pending", params={"proposal": pending})
            proposal = Proposal(
                round_id=round_id, action=action, details=json.dumps(details | {"log_length": seen}),
                preview=json.dumps(preview), status="pending", proposed_by=origin.operator,
                proposed_from=origin.address[:128], proposed_at=self.service.clock.now(),
            )  # fmt: skip
            session.add(proposal)
            session.flush()
            return describe(proposal)

    # ---- deciding -------------------------------------------------------------------------------

    def approve(self, proposal_id: int, origin: Origin) -> dict[str, Any]:
        """Apply the proposal, as a second operator: the decision is recorded in the transaction that applies it."""
        with self.service.sessions() as session:
            proposal = self._pending(session, proposal_id, origin)
            action, round_id, details = proposal.action, proposal.round_id, json.loads(proposal.details)

        def decide(session: Session, round_: Round) -> None:  # the round is locked: nothing changes it meanwhile
            self._decide(session, proposal_id, "applied", "", origin)
            if round_.log_length != details["log_length"]:
                raise ProposalRefusedError(
                    f"round {round_id} has changed since proposal #{proposal_id} was made: reject it and propose again",
                    reason="round_changed",
                )

        actor = f"#{proposal_id} approved by {origin.operator}"[:64]
        if action == "void":
            self.service.void(round_id, details["reason"], actor, along=decide)
        elif action == "card":
            self._deal_by_hand(proposal_id, round_id, details, origin, decide)
        else:
            cards = {int(index): Card.from_code(code) for index, code in details["cards"].items()}
            self.service.recalculate(round_id, cards, details["video_ref"], actor, along=decide)
        return self.get(proposal_id)

    def _deal_by_hand(
        self, proposal_id: int, round_id: str, details: dict[str, Any], origin: Origin, decide: Along
    ) -> None:
        """Deal an approved card entered by hand, journaled with both operators' names and the reason."""
        card = Card.from_code(details["card"])
        entries: list[Any] = []  # the journal entry, made once the round is locked (again on a retried transaction)

        def checked(session: Session, round_: Round) -> None:
            decide(session, round_)
            manual.wanted(self.service, session, round_, card)  # the table may have stopped allowing it meanwhile
            proposal = session.get(Proposal, proposal_id)
            assert proposal is not None  # locked and decided above
            entries.append(
                manual.journal_entry(
                    round_, proposal_id, card, proposal.proposed_by, origin.operator, details["reason"],
                    self.service.clock.now(),
                )
            )  # fmt: skip

        actor = f"manual #{proposal_id} by {origin.operator}"[:64]
        self.service.deal(round_id, card, actor, also=lambda session: session.add(entries[-1]), along=checked)

    def reject(self, proposal_id: int, reason: str, origin: Origin) -> dict[str, Any]:
        if not reason.strip():
            raise ProposalRefusedError("a rejection needs a reason", reason="reason_needed")
        with self.service.sessions.begin() as session:
            return self._decide(session, proposal_id, "rejected", reason, origin)

    def _decide(self, session: Session, proposal_id: int, status: str, reason: str, origin: Origin) -> dict[str, Any]:
        """Record the decision on the locked proposal (one decision: a second is refused)."""
        since = self._operator(session, origin)
        proposal = session.scalar(select(Proposal).where(Proposal.id == proposal_id).with_for_update())
        if proposal is None:
            raise NotFoundError(f"proposal #{proposal_id} does not exist")
        self._check_pending(proposal, origin, since)
        proposal.status, proposal.decision_reason = status, reason
        proposal.decided_by, proposal.decided_from = origin.operator, origin.address[:128]
        proposal.decided_at = self.service.clock.now()
        session.flush()
        return describe(proposal)

    def _pending(self, session: Session, proposal_id: int, origin: Origin) -> Proposal:
        since = self._operator(session, origin)
        proposal = session.get(Proposal, proposal_id)
        if proposal is None:
            raise NotFoundError(f"proposal #{proposal_id} does not exist")
        self._check_pending(proposal, origin, since)
        return proposal

    @staticmethod
    def _check_pending(proposal: Proposal, origin: Origin, approver_since: datetime | None = None) -> None:
        """Raise unless ``origin`` may decide the proposal; ``approver_since``: when the deciding account was made (an
        account made after the proposal can neither approve nor reject it: no one makes a second self to order)."""
        if proposal.status != "pending":
            message = f"proposal #{proposal.id} is {proposal.status} already"
            raise ProposalRefusedError(message, reason="already_decided", params={"proposal": proposal.id})
        if proposal.proposed_by == origin.operator:
            raise FourEyesError(f"proposal #{proposal.id} was made by {origin.operator}: another operator decides it")
        if approver_since is not None and aware(approver_since) > aware(proposal.proposed_at):
            raise FourEyesError(
                f"{origin.operator}'s account was made after proposal #{proposal.id}: it is decided by an operator "
                "whose account existed when it was proposed"
            )

    # ---- reading ------------------------------------------------------------------------------------

    def get(self, proposal_id: int) -> dict[str, Any]:
        with self.service.sessions() as session:
            proposal = session.get(Proposal, proposal_id)
            if proposal is None:
                raise NotFoundError(f"proposal #{proposal_id} does not exist")
            return describe(proposal)

    def list(self, status: str | None = None, round_id: str | None = None) -> list[dict[str, Any]]:
        if status is not None and status not in STATUSES:
            raise ProposalRefusedError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        query = select(Proposal).order_by(Proposal.id.desc()).limit(200)
        if status is not None:
            query = query.where(Proposal.status == status)
        if round_id is not None:
            query = query.where(Proposal.round_id == round_id)
        with self.service.sessions() as session:
            return [describe(proposal) for proposal in session.scalars(query)]

    # ---- checks ---------------------------------------------------------------------------------------

    def _settled(self, session: Session, round_id: str) -> Round:
        round_ = stored_round(session, round_id)
        if round_.phase != "settled":
            raise ProposalRefusedError(
                f"round {round_id} is {round_.phase}: only a settled round's money needs a second operator"
                + (" (void an unsettled round directly)" if round_.phase != "void" else ""),
                reason="settled_only",
            )
        return round_

    def void_unsettled(self, round_id: str, reason: str, operator: str) -> Any:
        """Void a round that has not settled, at once (one operator): checked with the round locked, so a round the
        controller settles meanwhile is refused (its void needs a proposal)."""

        def unsettled(_session: Session, round_: Round) -> None:
            if round_.phase == "settled":
                raise FourEyesRequiredError(
                    f"round {round_id} is settled: its void needs a second operator — propose it"
                    " (POST /v1/operator/proposals)"
                )

        return self.service.void(round_id, reason, operator, along=unsettled)

    @staticmethod
    def _operator(session: Session, origin: Origin) -> datetime:
        """When the operator's account was made; ``ForbiddenError`` if ``origin`` is not an operator (an admin, who
        manages staff, neither proposes nor approves)."""
        found = session.execute(
            select(Player.role, Player.created_at, Player.token_issued_by, Player.confirmed_by).where(
                Player.id == origin.operator
            )
        ).first()
        if found is None or found.role != "operator":
            raise ForbiddenError(f"{origin.operator!r} is not an operator: only operators propose and decide")
        if found.confirmed_by is None:
            raise UnconfirmedError(
                f"{origin.operator}'s token was issued by {found.token_issued_by} and no second admin confirmed it: it "
                f"proposes and decides nothing until one does (POST /v1/operator/players/{origin.operator}/confirm)"
            )
        since: datetime = found.created_at
        return since


def describe(proposal: Proposal) -> dict[str, Any]:
    details = json.loads(proposal.details)
    details.pop("log_length", None)
    return {
        "id": proposal.id, "round_id": proposal.round_id, "action": proposal.action, "details": details,
        "preview": json.loads(proposal.preview), "status": proposal.status,
        "proposed": {"by": proposal.proposed_by, "from": proposal.proposed_from,
                     "at": aware(proposal.proposed_at).isoformat()},
        "decided": None if proposal.decided_by is None else {
            "by": proposal.decided_by, "from": proposal.decided_from, "reason": proposal.decision_reason,
            "at": aware(proposal.decided_at).isoformat() if proposal.decided_at else None,
        },
    }  # fmt: skip
