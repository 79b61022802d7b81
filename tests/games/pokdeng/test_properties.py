"""Property tests over random full rounds driven through the engine."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from services.cards import FULL_DECK, Card
from services.games.pokdeng import (
    SEATS,
    AwaitingBets,
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    Outcome,
    PokDengError,
    PokDengRound,
    Position,
    Side,
    TableSettings,
)
from services.games.pokdeng import events as ev

STAKES = st.integers(min_value=1, max_value=10_000)


@dataclass
class Played:
    round: PokDengRound
    shoe: list[Card]
    refused: list[str] = field(default_factory=list)


def wrong_commands(round_: PokDengRound, card: Card) -> list[ev.Command]:
    """One command of every kind the round is not waiting for right now."""
    expecting = round_.expecting
    commands: list[ev.Command] = []
    if not isinstance(expecting, AwaitingBets):
        commands += [ev.PlaceWager("late", "late", Side.PLAYER, Position.A, 1), ev.CloseBetting()]
    if not isinstance(expecting, AwaitingCard):
        commands.append(ev.DealCard(card))
    elif round_.cards:
        commands.append(ev.DealCard(round_.cards[0]))  # a card already dealt this round
    if isinstance(expecting, AwaitingInsurance) and expecting.eligible:
        player = expecting.eligible[0]
        commands.append(ev.BuyInsurance(player, max(round_.insurance_amounts(player)) + 1))
    if isinstance(expecting, AwaitingDecision):
        commands.append(ev.Decide(expecting.seat, True, player="not-the-decider"))
    if not isinstance(expecting, AwaitingInsurance):
        commands += [ev.CloseInsurance(), ev.BuyInsurance("m1", 1)]
    for seat in SEATS:
        if not (isinstance(expecting, AwaitingDecision) and expecting.seat is seat):
            commands += [ev.Decide(seat, True), ev.DecisionTimeout(seat)]
    return commands


@st.composite
def played_rounds(draw: st.DrawFn, commission_bps: int | None = None) -> Played:
    bps = draw(st.sampled_from([0, 0, 250, 500])) if commission_bps is None else commission_bps
    round_ = PokDengRound(TableSettings(commission_bps=bps))
    mirror_seat = draw(st.sampled_from(SEATS))
    mirror_stake = draw(STAKES)
    round_.place_wager("m1", "m1", Side.PLAYER, mirror_seat, mirror_stake)
    round_.place_wager("m2", "m2", Side.BANKER, mirror_seat, mirror_stake)
    for index in range(draw(st.integers(0, 6))):
        player = f"p{index}"
        side = draw(st.sampled_from(list(Side)))
        for seat in draw(st.lists(st.sampled_from(SEATS), min_size=1, max_size=3, unique=True)):
            round_.place_wager(f"{player}{seat}", player, side, seat, draw(STAKES))
    players = sorted({wager.player for wager in round_.wagers})
    round_.close_betting({p: draw(st.integers(1, 5)) for p in players if draw(st.booleans())})
    shoe = list(draw(st.permutations(FULL_DECK)))
    played = Played(round_, shoe)
    spare = shoe[-1]  # never dealt: at most 12 cards leave the shoe
    while round_.result is None:
        for command in wrong_commands(round_, spare):
            before = len(round_.events)
            assert not round_.can(command), (command, round_.state())
            try:
                round_.apply(command)
            except PokDengError as error:
                played.refused.append(str(error))
            assert len(round_.events) == before
        match round_.expecting:
            case AwaitingCard():
                round_.deal(shoe.pop(0))
            case AwaitingInsurance(eligible=eligible):
                for player in eligible:
                    if draw(st.booleans()):
                        round_.buy_insurance(player, draw(st.sampled_from(round_.insurance_amounts(player))))
                round_.close_insurance()
            case AwaitingDecision(seat=seat):
                if draw(st.booleans()):
                    round_.decide(seat, draw(st.booleans()))
                else:
                    round_.decision_timeout(seat)
    return played


@settings(max_examples=300, deadline=None)
@given(played_rounds())
def test_no_card_is_dealt_twice_and_every_card_is_accounted_for(played: Played) -> None:
    dealt = played.round.cards
    assert len(dealt) == len(set(dealt))
    in_hands = [card for hand in played.round.hands.values() for card in hand]
    assert sorted(map(str, dealt)) == sorted(map(str, in_hands))
    assert 8 <= len(dealt) <= 12


@settings(max_examples=300, deadline=None)
@given(played_rounds())
def test_the_engine_never_accepts_what_it_was_not_waiting_for(played: Played) -> None:
    assert played.refused  # every step tried wrong inputs; all were refused (asserted while playing)
    assert all("refused" in message for message in played.refused)


@settings(max_examples=300, deadline=None)
@given(played_rounds())
def test_money_nets_to_the_settlements_and_stays_within_the_hold(played: Played) -> None:
    result = played.round.result
    assert result is not None
    bps = played.round.settings.commission_bps
    for item in result.wagers:  # the spec's money rules, written again independently of the code
        wager, outcome = item.wager, item.outcome
        if outcome is Outcome.TIE:
            expected = 0
        else:
            winner = result.hands[wager.seat] if outcome is Outcome.SEAT else result.hands[Position.BANKER]
            bettor_wins = (outcome is Outcome.SEAT) == (wager.side is Side.PLAYER)
            gross = winner.multiplier * wager.stake
            expected = gross - gross * bps // 10_000 if bettor_wins else -min(winner.multiplier, 3) * wager.stake
        assert item.net == expected, (item, expected)
    nets = result.player_nets()
    for player in {w.player for w in played.round.wagers}:
        own = [i.net for i in result.wagers if i.wager.player == player]
        own += [i.net for i in result.insurance if i.player == player]
        assert nets[player] == sum(own)
    assert result.house_net() == -sum(nets.values())
    for item in result.wagers:
        stake = item.wager.stake
        assert -3 * stake <= item.net <= 5 * stake
        assert item.net >= -played.round.settings.hold_multiple * stake
        if item.outcome is Outcome.TIE:
            assert item.net == 0
    for insurance in result.insurance:
        expected = insurance.amount * 12 // 10 if result.hands[Position.BANKER].is_pok else -insurance.amount
        assert insurance.net == expected


@settings(max_examples=300, deadline=None)
@given(played_rounds(commission_bps=0))
def test_player_and_banker_side_on_one_seat_mirror_each_other_except_under_the_cap(played: Played) -> None:
    result = played.round.result
    assert result is not None
    by_id = {item.wager.wager_id: item for item in result.wagers}
    player_side, banker_side = by_id["m1"], by_id["m2"]
    seat = player_side.wager.seat
    winner = {Outcome.SEAT: result.hands[seat], Outcome.BANKER: result.hands[Position.BANKER]}.get(player_side.outcome)
    if winner is not None and winner.multiplier == 5:
        winning, losing = sorted([player_side.net, banker_side.net], reverse=True)
        assert (winning, losing) == (5 * player_side.wager.stake, -3 * player_side.wager.stake)
    else:
        assert player_side.net == -banker_side.net


@settings(max_examples=300, deadline=None)
@given(played_rounds())
def test_draw_rules_hold_in_every_round(played: Played) -> None:
    result = played.round.result
    assert result is not None
    first_two = {position: hand[:2] for position, hand in played.round.hands.items()}
    for position, hand in result.hands.items():
        two_card_points = sum(min(10, "A23456789TJQK".index(card.rank) + 1) for card in first_two[position]) % 10
        if result.early or two_card_points >= 8:
            assert len(hand.cards) == 2, (position, hand)
        elif two_card_points == 0:
            assert len(hand.cards) == 3
        elif position is Position.BANKER:
            assert len(hand.cards) == (3 if two_card_points <= 5 else 2)


@settings(max_examples=100, deadline=None)
@given(played_rounds())
def test_replaying_the_commands_rebuilds_the_round(played: Played) -> None:
    serialized = [ev.command_to_dict(command) for command in played.round.commands]
    rebuilt = PokDengRound.replay([ev.command_from_dict(data) for data in serialized], played.round.settings)
    assert rebuilt.events == played.round.events
    assert rebuilt.result == played.round.result
