"""One round of Tiến Lên Miền Nam (pure, synchronous, replayable).

Players are listed in order of play (counter-clockwise). A trick (*vòng*) starts with a lead; each
player in turn beats the play on the table or passes, and a player who passed is out of the trick
until it ends — except to chop out of turn with four consecutive pairs, which brings them back. When
everyone else has passed, the last player to play takes the trick and leads. The round ends the
moment a player has played their last card.

Each action is a triad: ``verify_play`` raises, ``can_play`` answers, ``play`` applies and returns
the frozen events it caused; the same for passing. ``apply`` takes a command value, ``replay``
rebuilds a round from its command log, and ``timeout_command`` is what a turn's timeout produces.
Cards are strengths (see ``services.games.tienlen.cards``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from services.games.tienlen.cards import CARDS, code
from services.games.tienlen.combos import Combination, Kind, classify
from services.games.tienlen.errors import DealError, IllegalPlayError
from services.games.tienlen.events import (
    ChainSettled,
    Command,
    Event,
    Leave,
    Pass,
    Passed,
    Play,
    Played,
    PlayerLeft,
    RoundEnded,
    RoundResult,
    TrickWon,
)
from services.games.tienlen.hands import instant_win, loser_pays
from services.games.tienlen.moves import all_combinations, answers, out_of_turn_chops
from services.games.tienlen.settings import InstantWin, TienLenSettings

HAND_SIZE = 13


class Phase(StrEnum):
    PLAYING = "playing"
    FINISHED = "finished"


@dataclass(slots=True)
class _Chain:
    units: int
    chopped: str
    by: str
    cards: Combination


class TienLenRound:
    """A dealt round. ``leader`` is required unless ``starting_round`` (then the 3♠ rule names them)."""

    def __init__(
        self,
        players: Sequence[str],
        hands: Mapping[str, Iterable[int]],
        *,
        starting_round: bool,
        leader: str | None = None,
        settings: TienLenSettings | None = None,
    ) -> None:
        self.players = tuple(players)
        self.settings = settings or TienLenSettings()
        self.starting_round = starting_round
        self.dealt = _validated_deal(self.players, hands)
        self.hands = {player: set(cards) for player, cards in self.dealt.items()}
        self.leader, self.first_lead_card = self._first_leader(leader)
        self.to_act: str | None = self.leader
        self.top: Combination | None = None
        self.top_owner: str | None = None
        self.passed: set[str] = set()
        self.left: set[str] = set()  # out of the round: skipped in every trick, pay as leavers at its end
        self.played: set[str] = set()
        self.chops: list[ChainSettled] = []
        self.payments = dict.fromkeys(self.players, 0)
        self.history: list[Command] = []
        self.events: list[Event] = []
        self.result: RoundResult | None = None
        self._chain: _Chain | None = None
        self._settle_instant_win()

    @classmethod
    def replay(
        cls,
        players: Sequence[str],
        hands: Mapping[str, Iterable[int]],
        commands: Iterable[Command],
        *,
        starting_round: bool,
        leader: str | None = None,
        settings: TienLenSettings | None = None,
    ) -> TienLenRound:
        round_ = cls(players, hands, starting_round=starting_round, leader=leader, settings=settings)
        for command in commands:
            round_.apply(command)
        return round_

    @property
    def phase(self) -> Phase:
        return Phase.PLAYING if self.result is None else Phase.FINISHED

    # --- what may happen next -------------------------------------------------------------

    def legal_moves(self, player: str) -> list[Combination]:
        """The plays ``player`` may make now: in turn, or the out-of-turn chops open to them."""
        if self.result is not None or player not in self.hands or player in self.left:
            return []
        hand = self.hands[player]
        if player == self.to_act:
            if self.top is None:
                moves = all_combinations(hand)
                if self.first_lead_card is not None:
                    moves = [move for move in moves if self.first_lead_card in move.cards]
                return moves
            return answers(hand, self.top)
        if self.top is not None and player != self.top_owner:
            return out_of_turn_chops(hand, self.top)
        return []

    def timeout_command(self) -> Play | Pass | None:
        """What the player to act does when their time runs out: pass, or lead their lowest single card."""
        if self.to_act is None:
            return None
        if self.top is None:
            return Play(self.to_act, (min(self.hands[self.to_act]),), timed_out=True)
        return Pass(self.to_act, timed_out=True)

    def outcome(self) -> RoundResult | None:
        return self.result

    # --- playing --------------------------------------------------------------------------

    def verify_play(self, player: str, cards: Iterable[int]) -> Combination:
        """The combination ``player`` may play now; otherwise an ``IllegalPlayError`` that says why."""
        cards = tuple(cards)

        def refuse(why: str, *, reason: str, **params: object) -> IllegalPlayError:
            shown = " ".join(map(_card_text, cards))
            message = f"{player} cannot play {shown or 'nothing'}: {why} ({self.describe()})"
            return IllegalPlayError(message, reason=reason, params={"cards": _codes(cards)} | params)

        if self.result is not None:
            raise refuse("the round is over", reason="round_over")
        if player not in self.hands:
            raise refuse(f"not a player of this round (players: {', '.join(self.players)})", reason="not_a_player")
        if player in self.left:
            raise refuse("they left the round", reason="left_round")
        if len(set(cards)) != len(cards):
            raise refuse("a card is listed twice", reason="card_twice")
        missing = [card for card in cards if card not in self.hands[player]]
        if missing:
            shown = " ".join(map(_card_text, missing))
            raise refuse(f"not in their hand: {shown}", reason="not_in_hand", missing=_codes(missing))
        found = classify(cards)
        if found is None:
            raise refuse("the cards form no combination", reason="no_combination" if cards else "no_cards")
        if player == self.to_act:
            if self.top is None:
                if self.first_lead_card is not None and self.first_lead_card not in found.cards:
                    first = code(self.first_lead_card)
                    raise refuse(
                        f"the first lead of a starting round must contain {first}", reason="first_lead", card=first
                    )
            elif not found.beats(self.top):
                raise refuse(f"{found} does not beat {self.top}", reason="does_not_beat", top=_codes(self.top.cards))
            return found
        if self.top is None or not found.is_bomb(Kind.CONSECUTIVE_PAIRS, 4) or not found.chops(self.top):
            raise refuse(
                f"it is {self.to_act}'s turn; out of turn only four consecutive pairs that chop the play on the table "
                "may be played",
                reason="out_of_turn",
            )
        if player == self.top_owner:
            raise refuse("nobody may chop their own play", reason="chop_own")
        return found

    def can_play(self, player: str, cards: Iterable[int]) -> bool:
        try:
            self.verify_play(player, cards)
        except IllegalPlayError:
            return False
        return True

    def play(self, player: str, cards: Iterable[int]) -> tuple[Event, ...]:
        cards = tuple(cards)
        found = self.verify_play(player, cards)
        self.history.append(Play(player, cards))
        events: list[Event] = []
        chop = self.top is not None and found.chops(self.top)
        if chop:
            assert self.top is not None and self.top_owner is not None
            units = self.top.chop_value(self.settings) + (self._chain.units if self._chain else 0)
            self._chain = _Chain(units, chopped=self.top_owner, by=player, cards=found)
        events.append(Played(player, found, chop=chop, out_of_turn=player != self.to_act))
        self.hands[player].difference_update(found.cards)
        self.played.add(player)
        self.first_lead_card = None
        self.top, self.top_owner = found, player
        self.passed.discard(player)
        if self.hands[player]:
            events.extend(self._advance_from(player))
        else:
            events.extend(self._end_round(player))
        self.events.extend(events)
        return tuple(events)

    def verify_pass(self, player: str) -> None:
        if self.result is not None:
            raise IllegalPlayError(f"{player} cannot pass: the round is over ({self.describe()})", reason="round_over")
        if player != self.to_act:
            message = f"{player} cannot pass: it is {self.to_act}'s turn ({self.describe()})"
            raise IllegalPlayError(message, reason="not_your_turn")
        if self.top is None:
            message = f"{player} cannot pass: they lead this trick and must play ({self.describe()})"
            raise IllegalPlayError(message, reason="must_lead")

    def can_pass(self, player: str) -> bool:
        try:
            self.verify_pass(player)
        except IllegalPlayError:
            return False
        return True

    def pass_turn(self, player: str) -> tuple[Event, ...]:
        self.verify_pass(player)
        self.history.append(Pass(player))
        self.passed.add(player)
        events: list[Event] = [Passed(player)]
        events.extend(self._advance_from(player))
        self.events.extend(events)
        return tuple(events)

    def verify_leave(self, player: str) -> None:
        if self.result is not None:
            raise IllegalPlayError(f"{player} cannot leave: the round is over ({self.describe()})", reason="round_over")
        if player not in self.hands:
            message = f"{player} cannot leave: not a player of this round (players: {', '.join(self.players)})"
            raise IllegalPlayError(message, reason="not_a_player")
        if player in self.left:
            raise IllegalPlayError(f"{player} has left the round already", reason="left_round")

    def leave(self, player: str, missed: bool = False) -> tuple[Event, ...]:
        """``player`` is out of the round: their turns are skipped; a trick they were on top of goes, when everyone
        else has passed, to the next player in turn after them. With one player left, that player wins."""
        self.verify_leave(player)
        self.history.append(Leave(player, missed))
        self.left.add(player)
        events: list[Event] = [PlayerLeft(player, missed)]
        if self.first_lead_card in self.hands[player]:
            self.first_lead_card = None  # the starting lead's card left with them: the next player leads freely
        staying = [p for p in self.players if p not in self.left]
        if len(staying) == 1:
            events.extend(self._end_round(staying[0]))
        elif player == self.to_act:
            events.extend(self._advance_from(player))
        self.events.extend(events)
        return tuple(events)

    def apply(self, command: Command) -> tuple[Event, ...]:
        if isinstance(command, Play):
            return self.play(command.player, command.cards)
        if isinstance(command, Leave):
            return self.leave(command.player, command.missed)
        return self.pass_turn(command.player)

    def describe(self) -> str:
        """The trick in words, for error messages and logs."""
        if self.result is not None:
            return f"round over, won by {self.result.winner}"
        table = f"{self.top} by {self.top_owner}" if self.top else "no cards on the table"
        passed = f"; passed: {', '.join(p for p in self.players if p in self.passed)}" if self.passed else ""
        return f"{self.to_act} to act, {table}{passed}"

    # --- internals ------------------------------------------------------------------------

    def _next(self, player: str, out: set[str]) -> str | None:
        """The first player after ``player`` counter-clockwise (``player`` last) who is not ``out``."""
        index = self.players.index(player)
        for step in range(1, len(self.players) + 1):
            candidate = self.players[(index + step) % len(self.players)]
            if candidate not in out:
                return candidate
        return None

    def _advance_from(self, player: str) -> list[Event]:
        """Turn passes counter-clockwise to the next player still in the trick; back at the top (or, when the player
        on top has left, with no one left in the trick), the trick ends and the top's owner leads — or the next
        player after them when they have left."""
        following = self._next(player, self.passed | self.left)
        if following is not None and following != self.top_owner:
            self.to_act = following
            return []
        owner = self.top_owner
        leader = owner if owner is not None and owner not in self.left else self._next(owner or player, self.left)
        assert leader is not None, "a round with players in it has someone to lead"
        events: list[Event] = self._settle_chain()
        events.append(TrickWon(leader))
        self.top = self.top_owner = None
        self.passed.clear()
        self.to_act = leader
        return events

    def _settle_chain(self) -> list[Event]:
        chain, self._chain = self._chain, None
        if chain is None:
            return []
        settled = ChainSettled(by=chain.by, chopped=chain.chopped, cards=chain.cards, units=chain.units)
        self.payments[chain.by] += chain.units
        self.payments[chain.chopped] -= chain.units
        self.chops.append(settled)
        return [settled]

    def _end_round(self, winner: str) -> list[Event]:
        events = self._settle_chain()
        cong = frozenset(p for p in self.players if p not in self.played and p not in self.left)
        for player in self.players:
            if player == winner:
                continue
            owed = self.settings.cong if player in cong else loser_pays(self.hands[player], self.settings)
            if player in self.left:  # a leaver pays as one who never played, or as the loser they were if more
                owed = max(self.settings.cong, owed)
            self.payments[player] -= owed
            self.payments[winner] += owed
        return [*events, self._finish(winner, cong=cong, kind=None)]

    def _finish(self, winner: str, *, cong: frozenset[str], kind: InstantWin | None) -> RoundEnded:
        self.result = RoundResult(
            winner=winner,
            payments=dict(self.payments),
            chops=tuple(self.chops),
            instant_win=kind,
            cong=cong,
            left=frozenset(self.left),
        )
        self.to_act = None
        self.top = self.top_owner = None
        return RoundEnded(self.result)

    def _first_leader(self, leader: str | None) -> tuple[str, int | None]:
        if not self.starting_round:
            if leader not in self.players:
                raise DealError(f"leader {leader!r} is not a player (players: {', '.join(self.players)})")
            return leader, None
        lowest = min(card for cards in self.dealt.values() for card in cards)
        holder = next(player for player in self.players if lowest in self.dealt[player])
        if leader is not None and leader != holder:
            raise DealError(f"in a starting round {holder} leads (holds {code(lowest)}), not {leader!r}")
        return holder, lowest

    def _settle_instant_win(self) -> None:
        start = self.players.index(self.leader)
        in_turn = self.players[start:] + self.players[:start]
        held = [(player, kind) for player in in_turn if (kind := instant_win(self.dealt[player], self.settings))]
        if not held:
            return
        winner, kind = max(held, key=lambda item: item[1].strength)  # max keeps the first of equals
        for player in self.players:
            if player != winner:
                self.payments[player] -= self.settings.instant_win
                self.payments[winner] += self.settings.instant_win
        self.events.append(self._finish(winner, cong=frozenset(), kind=kind))


def _codes(cards: Iterable[int]) -> list[str]:
    """Card codes ("6S"), lowest first: how a refusal names cards to the pages."""
    return [_card_text(card) for card in sorted(cards)]


def _card_text(card: int) -> str:
    return code(card) if card in range(len(CARDS)) else repr(card)


def _validated_deal(players: tuple[str, ...], hands: Mapping[str, Iterable[int]]) -> dict[str, frozenset[int]]:
    if not 2 <= len(players) <= 4:
        raise DealError(f"a round needs 2–4 players, got {len(players)}")
    for player in players:
        if not isinstance(player, str) or not player:
            raise DealError(f"a player's name must be a non-empty string, got {player!r}")
    if len(set(players)) != len(players):
        raise DealError(f"a player is listed twice: {', '.join(players)}")
    if set(hands) != set(players):
        raise DealError(
            f"hands must be given for exactly the players ({', '.join(players)}), got {', '.join(map(str, hands))}"
        )
    dealt: dict[str, frozenset[int]] = {}
    holder: dict[int, str] = {}
    for player in players:
        cards = tuple(hands[player])
        if len(cards) != HAND_SIZE:
            raise DealError(f"{player} holds {len(cards)} cards, a hand is {HAND_SIZE}")
        for card in cards:
            if type(card) is not int or card not in range(len(CARDS)):
                raise DealError(f"{player}'s hand has {card!r}, not a card")
            if card in holder:
                raise DealError(f"{code(card)} is dealt twice ({holder[card]} and {player})")
            holder[card] = player
        dealt[player] = frozenset(cards)
    return dealt


__all__ = ["HAND_SIZE", "Phase", "TienLenRound"]
