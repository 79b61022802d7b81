"""The round service's shoe + camera cross-check (``services.rounds.checks``): the camera's word on a card, an
operator's word where the two disagree."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from services.cards import Card
from services.rounds import checks
from services.rounds.clock import aware
from services.rounds.core import RoundCore
from services.rounds.engines import RECALCULATE
from services.rounds.models import Round
from services.rounds.records import Applied, advanced


class CardChecks(RoundCore):
    """The camera's word on each checked card, and an operator's where shoe and camera disagree."""

    def camera_saw(
        self, round_id: str, position: int, card: Card | None, confidence: float | None = None, crop: bytes = b""
    ) -> Applied:
        """The controller's outcome of a pending check: the camera saw ``card`` (None: nothing within the window).
        A held round whose every check is now settled is settled in the same transaction."""

        def work(session: Session) -> Applied:
            round_ = self.locked_round(session, round_id)
            check = checks.locked(session, round_id, position)
            if check.status != checks.PENDING:
                raise checks.CheckError(f"round {round_id}: the card at position {position} is {check.status} already")
            check.checked_at = self.clock.now()
            if card is None:
                check.status = checks.UNSEEN
            else:
                check.status = checks.AGREED if str(card) == check.card else checks.MISMATCH
                check.camera_card, check.camera_confidence, check.camera_crop = str(card), confidence, crop or None
            return self._after_check(session, round_, None)

        return self.run(work)

    def confirm_read(self, round_id: str, position: int, read: str, actor: str, reason: str) -> Applied:
        """An operator's word on a card the camera did not confirm: which read is right (``shoe`` or ``camera``), who
        and why, in the round's log. The camera's read replaces the shoe's as a correction of the dealt round (one
        that would change the deal's flow is refused: void the round instead)."""
        if read not in checks.READS:
            raise checks.VerifySettingError(f"read must be shoe or camera, got {read!r}")
        if not reason.strip():
            raise checks.VerifySettingError("say why (reason): what the video shows")

        def work(session: Session) -> Applied:
            round_ = self.locked_round(session, round_id)
            check = checks.locked(session, round_id, position)
            where = f"round {round_id}: the card at position {position}"
            if check.status in checks.SETTLED_BY_CHECKS:
                by = f" by {check.confirmed_by}" if check.confirmed_by else " by the camera"
                raise checks.CheckError(f"{where} is {check.status} already{by}")
            if check.status == checks.PENDING:
                raise checks.CheckError(f"{where} is still being checked (until {aware(check.due_at).isoformat()})")
            if round_.voided_at is not None:
                raise checks.CheckError(f"{where}: the round is void, nothing to confirm")
            port = self.game_of(session, round_)
            engine = self.engines.take(session, round_, port)
            entry = {"type": checks.VERIFIED, "position": position, "shoe": check.card, "camera": check.camera_card,
                     "read": read, "reason": reason}  # fmt: skip
            correction: dict[int, Card] = {}
            if read == "camera":
                if check.camera_card is None:
                    raise checks.CheckError(f"{where}: the camera saw none; confirm the shoe's read or void the round")
                if round_.settled_at is not None or round_.voided_at is not None:
                    raise checks.CheckError(f"{where}: the round is over; correct it with a proposal (four eyes)")
                if port.payouts(engine) is None:
                    raise checks.CheckError(f"{where}: the round is still dealt; confirm the camera once it is dealt")
                correction = {position: Card.from_code(check.camera_card)}
            self._log(session, round_, entry, actor)
            if correction:
                engine, codes = self._corrected(round_, port, engine, correction, dealt_only=True)
                self._log(session, round_, {"type": RECALCULATE, "cards": codes, "video_ref": "camera check"}, actor)
                advanced(session, round_, engine, port)
            check.status, check.confirmed_read, check.confirmed_by = checks.CONFIRMED, read, actor
            check.confirmed_why, check.confirmed_at = reason, self.clock.now()
            return self._after_check(session, round_, engine)

        return self.run(work)

    def _after_check(self, session: Session, round_: Round, engine: Any) -> Applied:
        port = self.game_of(session, round_)
        engine = self.engines.take(session, round_, port) if engine is None else engine
        if round_.phase == checks.VERIFYING:
            self._settle_when_checked(session, round_, engine, port)
        return self.applied(session, round_, [], engine)

    def check_crop(self, round_id: str, position: int) -> bytes:
        with self.sessions() as session:
            return checks.crop(session, round_id, position)
