"""The round service's corrections of a round: void it, or recalculate it from the video."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from services.cards import Card
from services.ledger import void_holds
from services.rounds import checks
from services.rounds.core import RoundCore
from services.rounds.engines import RECALCULATE
from services.rounds.records import Along, Applied, advanced, stored_result, stored_round
from services.wallet.seamless import OPERATOR, roll_back_stakes


class Corrections(RoundCore):
    """A round voided or recalculated, its money moved by the difference only."""

    def void(self, round_id: str, reason: str, actor: str, along: Along | None = None) -> Applied:
        """Void: every pending hold goes back; a settled round's results are reversed by adjustments.

        ``along(session, round)`` runs first in the same transaction, the round locked (a proposal's decision)."""

        def work(session: Session) -> Applied:
            round_, port, engine = self.taken(session, round_id, along)
            was_settled = port.nets(engine) if round_.settled_at is not None else None
            events = self.append(session, round_, engine, port.void(reason), actor)
            ledger = self.ledger(session, round_.table_id)
            void_holds(ledger, round_id)
            owed = {}
            for player, net in sorted((was_settled or {}).items()):
                owed[player] = ledger.adjust(player, -net, round_id, f"void: {reason}")
            if self.table(session, round_.table_id).wallet == OPERATOR:
                if was_settled is None:
                    roll_back_stakes(session, ledger, round_id, f"void: {reason}")
                else:
                    self._mirror_adjustments(session, ledger, round_, owed, "void", f"void: {reason}")
            round_.voided_at = self.clock.now()
            return self.applied(session, round_, events, engine)

        return self.run(work)

    def recalculate(
        self, round_id: str, cards: dict[int, Card], video_ref: str, actor: str, along: Along | None = None
    ) -> dict[str, int]:
        """Correct misread cards of a settled round from the video; post the difference only.

        ``cards`` maps the index of a dealt card (0-based, shoe order) to the card the video shows.
        A correction that would have changed the flow of the round is refused: such a round must be voided.
        Returns each player's adjustment. ``along`` as for ``void``.
        """

        def work(session: Session) -> dict[str, int]:
            round_, port, old = self.taken(session, round_id, along)
            new, codes = self._corrected(round_, port, old, cards)
            before, after = port.nets(old), port.nets(new)
            ledger = self.ledger(session, round_.table_id)
            changes = {p: after.get(p, 0) - before.get(p, 0) for p in sorted(set(before) | set(after))}
            memo = f"recalculated from video {video_ref}"
            owed = {player: ledger.adjust(player, delta, round_id, memo) for player, delta in changes.items()}
            self._log(session, round_, {"type": RECALCULATE, "cards": codes, "video_ref": video_ref}, actor)
            if self.table(session, round_.table_id).wallet == OPERATOR:
                cause = f"correction{round_.log_length}"
                self._mirror_adjustments(session, ledger, round_, owed, cause, memo)
            round_.result = stored_result(port, new)
            self.adapter_of(session, round_).settled(self, session, round_, new)
            advanced(session, round_, new, port)
            return {p: d for p, d in changes.items() if d}

        return self.run(work)

    def preview_correction(self, round_id: str, cards: dict[int, Card]) -> dict[str, Any]:
        """What ``recalculate`` would change, without changing anything: the result before and after, and per player
        the round's net before and after and the adjustment. Refused as ``recalculate`` would refuse it."""
        with self.sessions() as session:
            round_ = stored_round(session, round_id)
            port = self.game_of(session, round_)
            with self.reading(session, round_) as old:
                new, _codes = self._corrected(round_, port, old, cards, dealt_only=round_.phase == checks.VERIFYING)
                before, after = port.nets(old), port.nets(new)
                result_before = port.result(old)
            players = {}
            for player in sorted(set(before) | set(after)):
                was, now = before.get(player, 0), after.get(player, 0)
                players[player] = {"before": was, "after": now, "adjustment": now - was}
            return {"result_before": result_before, "result_after": port.result(new), "players": players}
