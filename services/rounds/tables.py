"""The round service's tables: create one, change its settings, open its rounds."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.db.unit_of_work import run_transaction
from services.games.base import FINISHED, Window
from services.journal.models import DECK_HELD, DeckReport
from services.ledger.ledger import validate_currency
from services.rounds import checks
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError, RoundInProgressError, TableHeldError
from services.rounds.models import GameTable, Round, locked_table
from services.rounds.records import Applied, round_id_of
from services.rounds.returns import check_returns
from services.rounds.video import checked_template
from services.wallet.seamless import INTERNAL, OPERATOR, WALLETS


class TableRounds(RoundCore):
    """Tables and the opening of their rounds."""

    def create_table(
        self,
        table_id: str,
        currency: str = "THB",
        settings: dict[str, Any] | None = None,
        game: str = "pokdeng",
        video_url_template: str = "",
        allow_return_over_100: bool = False,
        wallet: str = INTERNAL,
        verify: str = checks.OFF,
        verify_window_ms: int = 3000,
        manual_cards: bool = False,
    ) -> None:
        """A new table. Settings that let a house bet return 100 % or more are refused unless
        ``allow_return_over_100`` (``services.rounds.returns``). ``wallet``: ``internal`` (the studio's ledger) or
        ``operator`` (the operator's wallet: ``services.wallet.seamless``), fixed for the table's life. ``verify``: the
        shoe + camera cross-check (``services.rounds.checks``; a room dealt online has no shoe to check)."""
        port = self.games.game(game)
        checks.checked_setting(verify, verify_window_ms)
        table_settings = port.settings(settings or {})
        validate_currency(currency)
        template = checked_template(video_url_template)
        if wallet not in WALLETS:
            raise RoundError(f"wallet must be one of {', '.join(WALLETS)}, got {wallet!r}")
        if wallet == OPERATOR and not self.games.adapter(game).operator_wallet:
            raise RoundError(
                f"a {game} table cannot use the operator's wallet: its players can lose more than they staked"
            )
        check_returns(table_id, self.games.adapter(game), table_settings, allow_return_over_100)

        def work(session: Session) -> None:
            if session.get(GameTable, table_id) is not None:
                raise RoundError(f"table {table_id!r} already exists")
            raw = json.dumps(port.settings_dict(table_settings))
            session.add(
                GameTable(
                    id=table_id, game=game, currency=currency, settings=raw, video_url_template=template,
                    allow_return_over_100=allow_return_over_100, wallet=wallet, verify=verify,
                    verify_window_ms=verify_window_ms, manual_cards=manual_cards,
                )
            )  # fmt: skip

        run_transaction(self.sessions, work)

    def change_settings(
        self, table_id: str, settings: dict[str, Any] | None, allow_return_over_100: bool | None = None
    ) -> None:
        """New settings for the table's next rounds (a round keeps the settings it opened with), and/or the return
        override; checked as at creation."""

        def work(session: Session) -> None:
            table = locked_table(session, table_id)
            port = self.games.game(table.game)
            table_settings = port.settings(json.loads(table.settings) if settings is None else settings)
            allow = table.allow_return_over_100 if allow_return_over_100 is None else allow_return_over_100
            check_returns(table_id, self.games.adapter(table.game), table_settings, allow)
            table.settings = json.dumps(port.settings_dict(table_settings))
            table.allow_return_over_100 = allow

        run_transaction(self.sessions, work)

    def set_video_url_template(self, table_id: str, video_url_template: str) -> None:
        """Where operators watch the table's video from now on (no money or round depends on it)."""
        template = checked_template(video_url_template)

        def work(session: Session) -> None:
            table = locked_table(session, table_id)
            table.video_url_template = template

        run_transaction(self.sessions, work)

    def set_manual_cards(self, table_id: str, allowed: bool) -> None:
        """Whether a card the shoe cannot read may be entered by hand, on two operators' word
        (``services.rounds.manual``)."""

        def work(session: Session) -> None:
            locked_table(session, table_id).manual_cards = allowed

        run_transaction(self.sessions, work)

    def change_verify(self, table_id: str, verify: str | None, window_ms: int | None = None) -> None:
        """The table's cross-check (off, warn, hold) and window from its next round on."""
        run_transaction(self.sessions, lambda session: checks.change_setting(session, table_id, verify, window_ms))

    def open_round(self, table_id: str, video_ref: str = "") -> str:
        return self.open(table_id, video_ref).round_id

    def open(self, table_id: str, video_ref: str = "") -> Applied:
        """Open the table's next round; the round as the controller follows it (read where it was written)."""

        def work(session: Session) -> Applied:
            table = locked_table(session, table_id)
            self.fenced(session, table_id)
            held = session.scalar(
                select(DeckReport.id).where(DeckReport.table_id == table_id, DeckReport.status == DECK_HELD).limit(1)
            )
            if held is not None:
                raise TableHeldError(
                    f"table {table_id} is held: its last deck was not whole (deck report #{held}); an operator "
                    f"acknowledges the report first (POST /v1/operator/decks/{held}/acknowledge)"
                )
            unfinished = session.scalar(
                select(Round.id).where(Round.table_id == table_id, Round.phase.not_in(FINISHED))
            )
            if unfinished is not None:
                raise RoundInProgressError(f"table {table_id}: round {unfinished} is not finished yet")
            number = (
                session.scalar(
                    select(Round.number).where(Round.table_id == table_id).order_by(Round.number.desc()).limit(1)
                )
                or 0
            ) + 1
            port = self.games.game(table.game)
            settings = port.settings(json.loads(table.settings))
            engine = port.new_round(settings)
            first = port.expecting(engine)
            now = self.clock.now()
            window = now + timedelta(milliseconds=first.ms) if isinstance(first, Window) else None
            round_id = round_id_of(table_id, number)
            round_ = Round(
                id=round_id, table_id=table_id, number=number, phase=port.phase(engine),
                settings=table.settings, opened_at=now, betting_closes_at=window or now,
                window_closes_at=window, video_ref=video_ref, log_length=0,
                verify=checks.OFF if port.deals_online(settings) else table.verify,
                verify_window_ms=table.verify_window_ms, result_pause_ms=table.result_pause_ms,
            )  # fmt: skip
            if port.deals_online(settings):  # the deck is fixed, and its commitment public, before anyone acts
                shuffle = self.shuffle()
                round_.shuffle_commitment = shuffle.commitment()
                round_.shuffle_deck = ",".join(str(card) for card in shuffle.deck)
                round_.shuffle_salt = shuffle.salt
            session.add(round_)
            session.flush()
            self.games.adapter(port.name).opened(self, session, round_, engine)
            return self.applied(session, round_, [], engine)

        return self.run(work)
