"""The round's flow, step by step: what it waits for, what it refuses, what it emits."""

import json

import pytest

from services.cards import Card
from services.games.pokdeng import (
    AwaitingBets,
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    DecisionError,
    IllegalActionError,
    InsuranceError,
    Phase,
    PokDengRound,
    Position,
    SettingsError,
    Side,
    TableSettings,
    WagerError,
)
from services.games.pokdeng import events as ev
from services.games.pokdeng.views import public_view

A, B, C, BANKER = Position.A, Position.B, Position.C, Position.BANKER
PLAYER_SIDE, BANKER_SIDE = Side.PLAYER, Side.BANKER


def deal(round_: PokDengRound, codes: str) -> list[ev.Event]:
    events: list[ev.Event] = []
    for code in codes.split():
        events += round_.deal(Card.from_code(code))
    return events


def opened(settings: TableSettings | None = None) -> PokDengRound:
    round_ = PokDengRound(settings)
    round_.place_wager("w1", "p1", PLAYER_SIDE, A, 100)
    round_.place_wager("w2", "p2", PLAYER_SIDE, B, 50)
    round_.place_wager("w3", "p3", BANKER_SIDE, C, 40)
    return round_


def test_initial_deal_goes_a_b_c_banker_twice_with_the_banker_second_card_face_down() -> None:
    round_ = opened()
    assert round_.expecting == AwaitingBets()
    round_.close_betting()
    seen = []
    for code in "5H 2D KD 4S TH 4C 3C 2C".split():
        expecting = round_.expecting
        assert isinstance(expecting, AwaitingCard)
        seen.append((expecting.position, expecting.index, expecting.face_up))
        round_.deal(Card.from_code(code))
    assert seen == [
        (A, 0, True), (B, 0, True), (C, 0, True), (BANKER, 0, True),
        (A, 1, True), (B, 1, True), (C, 1, True), (BANKER, 1, False),
    ]  # fmt: skip
    # 4S up: no insurance; banker 6 is no Pok; A has 5 and a decider: its window opens first.
    assert round_.expecting == AwaitingDecision(A, "p1", 5, 4)
    assert round_.phase is Phase.DRAWING


def test_card_during_betting_is_refused_and_names_the_state() -> None:
    round_ = opened()
    with pytest.raises(IllegalActionError, match=r"card 5H refused: phase betting, waiting for bets"):
        round_.deal(Card.from_code("5H"))
    assert round_.events[-1] == ev.WagerAccepted(round_.wagers[-1], 0)
    assert len(round_.commands) == 3 and round_.phase is Phase.BETTING


def test_no_bet_after_betting_closes() -> None:
    round_ = opened()
    round_.close_betting()
    with pytest.raises(IllegalActionError, match=r"wager 'w9' .* refused: phase dealing"):
        round_.place_wager("w9", "p9", PLAYER_SIDE, A, 10)
    assert len(round_.wagers) == 3


def test_duplicate_card_within_a_round_is_refused() -> None:
    round_ = opened()
    round_.close_betting()
    deal(round_, "5H 2D")
    with pytest.raises(IllegalActionError, match="card 5H refused: already dealt to A"):
        round_.deal(Card.from_code("5h"))
    assert round_.expecting == AwaitingCard(C, 0, True)


def test_banker_pok_settles_early_without_any_window() -> None:
    round_ = opened()
    round_.close_betting({"p1": 2})
    events = deal(round_, "5H 2D KD 4S TH 4C 3C 5C")  # banker 4S 5C: Pok 9, no insurance (4 up)
    assert not any(isinstance(event, ev.DecisionWindowOpened | ev.DrawDecided) for event in events)
    assert round_.phase is Phase.SETTLED and round_.result is not None and round_.result.early


def test_decision_windows_and_automatic_draws() -> None:
    round_ = opened()
    round_.close_betting({"p1": 2})
    deal(round_, "5H 2D KD 4S TH 4C 3C 2C")  # A 5, B 6, C 3 (banker-side only), banker 6
    with pytest.raises(IllegalActionError, match="decision on seat B refused: .*decision on seat A by p1"):
        round_.decide(B, True)
    with pytest.raises(DecisionError, match="p2 is not the seat's decider"):
        round_.decide(A, True, player="p2")
    round_.decision_timeout(A)  # 5 points > p1's threshold 2: stands
    assert round_.expecting == AwaitingDecision(B, "p2", 6, 4)
    events = round_.decide(B, True, player="p2")
    assert round_.expecting == AwaitingCard(B, 2, True)
    assert events == [ev.DrawDecided(B, True, ev.DrawReason.PLAYER, 6)]
    events = deal(round_, "AC")
    # C has no player-side wager: table default 4, 3 points → draws at once
    assert events[-1] == ev.DrawDecided(C, True, ev.DrawReason.NO_DECIDER, 3)
    assert round_.expecting == AwaitingCard(C, 2, True)
    events = deal(round_, "9C")
    # banker has 6: stands by rule, then reveal and settle
    kinds = [type(event) for event in events]
    assert kinds == [ev.CardDealt, ev.DrawDecided, ev.CardRevealed, ev.RoundSettled]
    assert events[1] == ev.DrawDecided(BANKER, False, ev.DrawReason.BANKER_RULE, 6)
    assert round_.expecting is None and round_.phase is Phase.SETTLED
    result = round_.result
    assert result is not None
    assert [hand.points for hand in result.hands.values()] == [5, 7, 2, 6]
    assert {str(k): str(v) for k, v in result.outcomes.items()} == {"A": "banker", "B": "seat", "C": "banker"}
    assert [item.net for item in result.wagers] == [-100, 50, 40]


def test_zero_points_must_draw_and_pok_may_not() -> None:
    round_ = opened()
    round_.close_betting()
    events = deal(round_, "KH 5D 2D 7S QH 4C 3C TS")  # A 0 (forced), B 9 Pok, C 5 banker-side only
    assert ev.DrawDecided(A, True, ev.DrawReason.FORCED, 0) in events
    assert round_.expecting == AwaitingCard(A, 2, True)
    events = deal(round_, "AH")
    assert events[1:3] == [
        ev.DrawDecided(B, False, ev.DrawReason.POK, 9),
        ev.DrawDecided(C, False, ev.DrawReason.NO_DECIDER, 5),
    ]
    assert events[3] == ev.DrawDecided(BANKER, False, ev.DrawReason.BANKER_RULE, 7)
    assert round_.result is not None and not round_.result.early


def test_insurance_window_opens_on_an_8_or_9_up_card_and_pays_on_banker_pok() -> None:
    round_ = opened()
    round_.place_wager("w4", "p1", PLAYER_SIDE, B, 60)
    round_.close_betting()
    events = deal(round_, "5H 2D KD 9S TH 4S 3C TC")
    assert ev.InsuranceOffered(Card.from_code("9S")) in events
    assert round_.expecting == AwaitingInsurance(("p1", "p2", "p3"))
    assert round_.insurance_amounts("p1") == (160, 80)
    with pytest.raises(InsuranceError, match=r"the amount must be 160 or 80"):
        round_.buy_insurance("p1", 100)
    with pytest.raises(InsuranceError, match="p9 has no wager"):
        round_.buy_insurance("p9", 100)
    round_.buy_insurance("p1", 80)
    with pytest.raises(InsuranceError, match="already bought insurance for 80"):
        round_.buy_insurance("p1", 160)
    assert round_.expecting == AwaitingInsurance(("p2", "p3"))
    round_.buy_insurance("p3", 40)
    events = round_.close_insurance()
    assert [type(event) for event in events] == [ev.InsuranceClosed, ev.CardRevealed, ev.RoundSettled]
    result = round_.result
    assert result is not None and result.early
    assert {item.player: item.net for item in result.insurance} == {"p1": 96, "p3": 48}


def test_insurance_is_lost_when_the_banker_has_no_pok_and_the_hidden_card_stays_hidden() -> None:
    round_ = opened()
    round_.close_betting()
    events = deal(round_, "5H 2D KD 8S TH 4S 3C 7C")  # banker 8 + 7 = 5
    events += round_.buy_insurance("p2", 50)
    events += round_.close_insurance()
    assert not any(isinstance(event, ev.CardRevealed) for event in events)
    assert round_.expecting == AwaitingDecision(A, "p1", 5, 4)


def test_all_three_seats_pok_settles_without_the_banker_drawing() -> None:
    round_ = opened()
    round_.close_betting()
    events = deal(round_, "4H 5D 8D 2S 4C 4S KC 3C")  # A 8, B 9, C 8, banker 5
    assert not any(isinstance(event, ev.DrawDecided) for event in events)
    result = round_.result
    assert result is not None and result.early
    assert [len(hand.cards) for hand in result.hands.values()] == [2, 2, 2, 2]


def test_camera_table_deals_the_banker_second_card_face_up_after_insurance() -> None:
    round_ = opened(TableSettings(banker_second_card_after_insurance=True))
    round_.close_betting()
    deal(round_, "5H 2D KD 9S TH 4S 3C")
    assert isinstance(round_.expecting, AwaitingInsurance)
    with pytest.raises(IllegalActionError, match="card TC refused: phase insurance"):
        round_.deal(Card.from_code("TC"))
    round_.close_insurance()
    assert round_.expecting == AwaitingCard(BANKER, 1, True)
    events = deal(round_, "TC")
    assert events[0] == ev.CardDealt(BANKER, 1, Card.from_code("TC"), True)
    assert round_.result is not None and round_.result.early  # 9 + T: Pok 9
    assert not any(isinstance(event, ev.CardRevealed) for event in round_.events)  # it was never hidden


def test_decider_is_the_largest_stake_and_ties_go_to_the_earlier_bet() -> None:
    round_ = PokDengRound()
    round_.place_wager("w1", "early", PLAYER_SIDE, A, 50)
    round_.place_wager("w2", "late", PLAYER_SIDE, A, 50)
    round_.place_wager("w3", "banker", BANKER_SIDE, A, 50)
    assert round_.decider(A) == "early"
    round_.place_wager("w2", "late", PLAYER_SIDE, A, 10)  # a raise
    assert round_.decider(A) == "late"
    assert round_.wagers[1].stake == 60 and round_.wagers[1].order == 1
    assert round_.decider(B) is None


def test_a_decider_outweighed_by_the_banker_side_loses_the_choice_to_the_default_threshold() -> None:
    """A seat's largest player-side bettor decides only while their own stake is at least everything staked on the
    banker side against the seat: other players' player-side stakes do not lend them weight."""
    round_ = PokDengRound(TableSettings(default_threshold=4))
    round_.place_wager("w1", "small", PLAYER_SIDE, A, 10)
    round_.place_wager("w2", "friend", BANKER_SIDE, A, 10)
    assert round_.decider(A) == "small"  # even stakes: still theirs
    round_.place_wager("w3", "crowd", PLAYER_SIDE, A, 9)
    round_.place_wager("w4", "other", BANKER_SIDE, A, 1)
    assert round_.decider(A) is None  # 10 < 11 against, though the player side holds 19
    round_.place_wager("w5", "big", BANKER_SIDE, B, 500)
    round_.place_wager("w6", "mine", PLAYER_SIDE, C, 20)
    assert round_.decider(C) == "mine"  # another seat's banker side does not count
    round_.close_betting({"small": 1})
    events = deal(round_, "3H 2D KD 4S TH 4C 3C 2C")  # A 3, B 6, C 3, banker 6
    # A: its decider keeps threshold 1 (stand on 3), but they are outweighed: the table's 4 draws, no window opens
    assert events[-1] == ev.DrawDecided(A, True, ev.DrawReason.OUTWEIGHED, 3)
    assert not any(isinstance(event, ev.DecisionWindowOpened) for event in round_.events)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (ev.PlaceWager("w9", "p1", BANKER_SIDE, B, 10), "p1 already bets on the player side"),
        (ev.PlaceWager("w9", "p1", PLAYER_SIDE, A, 10), "raise wager 'w1'"),
        (ev.PlaceWager("w1", "p1", PLAYER_SIDE, B, 10), "id 'w1' belongs to another wager"),
        (ev.PlaceWager("w9", "p9", PLAYER_SIDE, BANKER, 10), "seat must be A, B or C"),
        (ev.PlaceWager("w9", "p9", PLAYER_SIDE, A, 0), "stake must be a positive whole number, got 0"),
        (ev.PlaceWager("w9", "p9", PLAYER_SIDE, A, 1.5), "positive whole number, got 1.5"),
        (ev.PlaceWager("w9", "p9", PLAYER_SIDE, A, 5), "below the table minimum 10"),
        (ev.PlaceWager("w1", "p1", PLAYER_SIDE, A, 950), "stake 1050 exceeds the table maximum 1000"),
        (ev.CloseBetting({"p1": 6}), "threshold of p1: 6 is not within 1–5"),
        (ev.CloseInsurance(), "close of the insurance window refused: phase betting"),
        (ev.DecisionTimeout(A), "timeout of seat A refused"),
        (ev.VoidRound("  "), "a reason is required"),
    ],
)
def test_refused_commands_change_nothing(command: ev.Command, message: str) -> None:
    round_ = PokDengRound(TableSettings(min_stake=10, max_stake=1000))
    round_.place_wager("w1", "p1", PLAYER_SIDE, A, 100)
    before = (list(round_.events), list(round_.commands), round_.wagers, round_.expecting)
    assert not round_.can(command)
    with pytest.raises(ValueError, match=message):
        round_.apply(command)
    assert (list(round_.events), list(round_.commands), round_.wagers, round_.expecting) == before


def test_raise_respects_the_maximum_on_the_total_and_skips_the_minimum() -> None:
    round_ = PokDengRound(TableSettings(min_stake=10, max_stake=100))
    round_.place_wager("w1", "p1", PLAYER_SIDE, A, 90)
    events = round_.place_wager("w1", "p1", PLAYER_SIDE, A, 5)
    assert events == [ev.WagerAccepted(round_.wagers[0], 5)] and round_.wagers[0].stake == 95
    with pytest.raises(WagerError):
        round_.place_wager("w1", "p1", PLAYER_SIDE, A, 6)


def test_void_at_any_time_and_after_settlement() -> None:
    round_ = opened()
    round_.close_betting()
    deal(round_, "5H 2D")
    events = round_.void("shoe jammed")
    assert events == [ev.RoundVoided("shoe jammed", was_settled=False)]
    assert round_.phase is Phase.VOID and round_.expecting is None
    with pytest.raises(IllegalActionError, match="already void"):
        round_.void("again")
    with pytest.raises(IllegalActionError, match="phase void"):
        round_.deal(Card.from_code("KD"))


def test_commands_round_trip_through_json_and_rebuild_the_same_round() -> None:
    round_ = opened()
    round_.close_betting({"p1": 5})
    deal(round_, "5H 2D KD 9S TH 4S 3C 7C")
    round_.buy_insurance("p3", 40)
    round_.close_insurance()
    round_.decide(A, True, player="p1")
    deal(round_, "AC")
    round_.decision_timeout(B)
    serialized = [ev.command_to_dict(command) for command in round_.commands]
    rebuilt = PokDengRound.replay([ev.command_from_dict(data) for data in serialized])
    assert rebuilt.events == round_.events
    assert rebuilt.expecting == round_.expecting


def test_unknown_command_type_is_named() -> None:
    with pytest.raises(ValueError, match="unknown command type: 'shuffle'"):
        ev.command_from_dict({"type": "shuffle"})


def test_refusal_messages_never_show_the_face_down_card() -> None:
    round_ = opened()
    round_.close_betting()
    deal(round_, "5H 2D KD 4S TH 4C 3C 2C")  # the banker's 2C is face down
    with pytest.raises(IllegalActionError) as error:
        round_.buy_insurance("p1", 100)
    assert "banker:4S??" in str(error.value) and "2C" not in str(error.value)
    round_.decision_timeout(A)
    round_.decision_timeout(B)  # B 6 vs threshold 4: stands; C draws by default, banker after
    deal(round_, "9C")
    assert round_.phase is Phase.SETTLED
    assert "banker:4S2C" in round_.state()  # revealed at settlement


@pytest.mark.parametrize(
    "command",
    [
        ev.PlaceWager("w9", "p9", "player", A, 10),  # type: ignore[arg-type]
        ev.PlaceWager("w9", "p9", PLAYER_SIDE, "A", 10),  # type: ignore[arg-type]
        ev.PlaceWager("w9", "", PLAYER_SIDE, A, 10),
        ev.DealCard("5H"),  # type: ignore[arg-type]
    ],
)
def test_wrongly_typed_commands_are_refused(command: ev.Command) -> None:
    round_ = PokDengRound()
    if isinstance(command, ev.DealCard):
        round_.close_betting()
    with pytest.raises(ValueError, match="refused"):
        round_.apply(command)
    assert round_.wagers == [] and round_.cards == []


def test_a_decision_must_be_a_bool() -> None:
    round_ = opened()
    round_.close_betting()
    deal(round_, "5H 2D KD 4S TH 4C 3C 2C")
    with pytest.raises(DecisionError, match="got 'stand'"):
        round_.decide(A, "stand")  # type: ignore[arg-type]
    assert round_.expecting == AwaitingDecision(A, "p1", 5, 4)


def test_banker_side_insurance_is_the_total_stake_only() -> None:
    round_ = PokDengRound()
    for seat in (A, B, C):
        round_.place_wager(f"w{seat}", "bank", BANKER_SIDE, seat, 30)
    assert round_.insurance_amounts("bank") == (90,)


def test_seat_thresholds_override_the_deciders() -> None:
    round_ = opened()
    round_.apply(ev.CloseBetting({"p1": 5}, {A: 1}))
    deal(round_, "3H 2D KD 4S TH 4C 3C 2C")  # A has 3
    assert round_.expecting == AwaitingDecision(A, "p1", 3, 1)
    assert round_.decision_timeout(A)[0] == ev.DrawDecided(A, False, ev.DrawReason.TIMEOUT, 3)


def test_a_voided_settled_round_has_no_result() -> None:
    round_ = opened()
    round_.close_betting()
    deal(round_, "4H 5D 8D 2S 4C 4S KC 3C")  # all seats Pok: settles
    assert round_.result is not None
    assert round_.void("wrong shoe") == [ev.RoundVoided("wrong shoe", was_settled=True)]
    assert round_.result is None


def test_the_public_view_never_names_a_player_nor_shows_the_face_down_card_before_its_reveal() -> None:
    round_ = opened()
    round_.close_betting()
    deal(round_, "5H 2D KD 4S TH 4C 3C 2C")  # A waits for p1's decision; the banker's 2C is face down
    view = json.dumps(public_view(round_))
    assert not any(player in view for player in ("p1", "p2", "p3", "w1", "w2", "w3"))
    assert public_view(round_)["waiting_for"] == "a draw/stand decision on seat A"
    assert public_view(round_)["hands"]["banker"]["cards"] == ["4S", None] and '"2C"' not in view


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("hold_multiple", 10**30),
        ("max_stake", 10**16),
        ("betting_window_ms", 10**20),
        ("insurance_window_ms", 3_600_001),
        ("decision_window_ms", 10**9),
    ],
)
def test_settings_beyond_what_the_ledger_and_clock_hold_are_refused(name: str, value: int) -> None:
    with pytest.raises(SettingsError, match=f"setting {name}: .* is above its largest value"):
        TableSettings.from_mapping({name: value})
