"""Property: random rounds settled through the ledger conserve money and match `studio replay`.

Balances are read back from the database, never recomputed by the code under test; each
player's wallet change is compared with the transcript replay of the same round.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from services.cards import FULL_DECK
from services.catalog import STUDIO_GAMES
from services.games.pokdeng import SEATS, AwaitingCard, AwaitingDecision, AwaitingInsurance, Side
from services.games.pokdeng.transcript import replay
from services.ledger.holds import RESOLVED
from services.ledger.models import Account, Hold, HoldResolution
from services.ledger.wallets import WalletService
from services.rounds.clock import ManualClock
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.service import RoundService

FUNDS = 1_000_000


def test_settled_rounds_conserve_money_and_pay_what_replay_computes(sessions: sessionmaker[Session]) -> None:
    """One database for every example, each example its own table and players (a failed one leaves no open round
    behind), service, wallets and clock."""
    examples = itertools.count()

    @settings(max_examples=25, deadline=None)
    @given(data=st.data())
    def settle_a_random_round(data: st.DataObject) -> None:
        settle(sessions, next(examples), data)

    settle_a_random_round()


def settle(sessions: sessionmaker[Session], example: int, data: st.DataObject) -> None:
    """A random round on a table of its own, settled; then the money checks."""
    clock = ManualClock()
    service = RoundService(sessions, clock, games=STUDIO_GAMES)
    wallets = WalletService(sessions, "THB")
    players = [f"x{example}p{i}" for i in range(data.draw(st.integers(1, 5)))]
    for player in players:
        wallets.deposit(player, FUNDS, f"fund-{player}", "op")
    service.create_table(f"x{example}", allow_return_over_100=True)
    round_id = service.open_round(f"x{example}")
    wagers = []
    for player in players:
        side = data.draw(st.sampled_from(list(Side)))
        seats = data.draw(st.lists(st.sampled_from(SEATS), min_size=1, max_size=3, unique=True))
        bets = [Bet(side, seat, data.draw(st.integers(1, 5_000))) for seat in seats]
        slip = pokdeng(service).place_bets(player, round_id, bets, f"{round_id}-{player}")
        wagers += [{**w, "id": w["wager_id"], "player": player} for w in slip["wagers"]]
    applied = pokdeng(service).close_betting(round_id)
    shoe = list(data.draw(st.permutations(FULL_DECK)))
    dealt, decisions, insurance = [], {}, {}
    engine = applied.engine
    while engine.result is None:
        match engine.expecting:
            case AwaitingCard():
                dealt.append(shoe.pop())
                engine = service.deal(round_id, dealt[-1]).engine
            case AwaitingInsurance(eligible=eligible):
                for player in eligible:
                    if data.draw(st.booleans()):
                        amount = data.draw(st.sampled_from(engine.insurance_amounts(player)))
                        pokdeng(service).buy_insurance(player, round_id, amount, f"{round_id}-ins-{player}")
                        insurance[player] = amount
                engine = pokdeng(service).close_insurance(round_id).engine
            case AwaitingDecision(seat=seat, decider=decider):
                if data.draw(st.booleans()):
                    draw = data.draw(st.booleans())
                    decisions[str(seat)] = "draw" if draw else "stand"
                    engine = pokdeng(service).decide(decider, round_id, seat, draw).engine
                else:
                    clock.advance(seconds=10)
                    engine = pokdeng(service).decision_timeout(round_id, seat).engine
    transcript = {
        "cards": [str(card) for card in dealt],
        "decisions": decisions,
        "wagers": [{k: w[k] for k in ("id", "player", "side", "seat", "stake")} for w in wagers],
        "insurance": insurance,
    }
    nets = replay(transcript).player_nets()
    with sessions() as session:
        assert session.scalar(select(func.sum(Account.balance))) == 0
        holds = session.scalars(select(Hold.id).where(Hold.round_id == round_id)).all()
        lines = [(line.hold_id, line.status) for line in session.execute(RESOLVED.where(Hold.round_id == round_id))]
        assert sorted(lines) == sorted((hold_id, "posted") for hold_id in holds)  # every hold resolved, once
        nets: dict[str, int] = {}
        for player, net in session.execute(
            select(Hold.player, func.sum(HoldResolution.win - HoldResolution.commission - HoldResolution.loss))
            .join(HoldResolution, HoldResolution.hold_id == Hold.id)
            .where(Hold.round_id == round_id)
            .group_by(Hold.player)
        ):
            nets[player] = int(net)
        assert {p: n for p, n in nets.items() if n} == {p: n for p, n in replay(transcript).player_nets().items() if n}
    for player in players:
        assert wallets.balance(player) == {
            "player": player, "currency": "THB", "balance": FUNDS + nets.get(player, 0), "held": 0, "debt": 0,
        }  # fmt: skip
