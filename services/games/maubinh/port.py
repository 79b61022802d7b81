"""Mậu Binh on the game port: one hand of a room — seats and the ready check, the deal, arranging, the
showdown chi by chi, the payments.

Players take seats (2–4) and say they are ready; each seat holds the largest loss a hand allows with the players
seated (``MauBinhSettings.largest_loss(n)`` × ``unit``, ``seat_hold``), so a loss never passes the hold: as players
sit down every seat's hold grows, and a seated player whose wallet cannot cover the larger hand is out before the deal
(``Short``). The deal starts when every seated player (at least two) is ready; a player still not ready ``ready_ms``
after all the others are is removed; leaving or being removed before the deal gives the hold back at once (the
adapter releases the holds of ``Freed`` seats and fits the others' to the players left). Seats and the ready check are
``rooms.Seating``, which every room game can use. The deal comes from the shoe one card at a time in seat order, face
down: each player sees only their own 13 cards. Then everyone arranges within ``arranging_ms`` (a player who has not
submitted gets the auto-arrangement; an arrangement that is *binh lủng* is taken only when the player confirms it);
a player may leave before the showdown and loses every chi as the spec says. The showdown reveals chi 1, chi 2 and
chi 3 of every hand, ``showdown_ms`` each, then settles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.cards import Card
from services.games import rooms
from services.games.base import (
    DEALER,
    Audience,
    Expecting,
    GameError,
    NotExpectedError,
    NotYourMoveError,
    Payout,
    Window,
)
from services.games.maubinh.arrange import auto_arrange
from services.games.maubinh.cards import CARDS, codes
from services.games.maubinh.hand import HAND_SIZE, LEFT, Hand, Seat
from services.games.maubinh.ranking import category_of
from services.games.maubinh.room import (
    CHIS,
    NUMBER,
    Arrange,
    Arranged,
    CloseArranging,
    Command,
    Phase,
    Reveal,
    Revealed,
    Room,
    RoomEvent,
    RoomSettings,
)
from services.games.maubinh.scoring import money, score_table
from services.games.maubinh.settings import MauBinhSettings
from services.games.maubinh.showdown import result_to_dict
from services.games.rooms import (
    CloseSeating,
    Deal,
    Dealt,
    Leave,
    Left,
    PhaseChanged,
    Ready,
    Remove,
    RoomGame,
    Short,
    Sit,
    Void,
)


class MauBinh(RoomGame[Room]):
    name = "maubinh"

    def settings(self, raw: Mapping[str, Any]) -> RoomSettings:
        return rooms.room_settings(RoomSettings, raw, MauBinhSettings.from_mapping)

    def new_round(self, settings: RoomSettings) -> Room:
        return Room(settings)

    # ---- commands ----------------------------------------------------------------------

    def verify(self, round_: Room, command: Command) -> None:
        match command:
            case Sit() | Ready() | Remove() | Short():
                round_.seating.verify(command, round_.phase)
            case CloseSeating():
                if round_.phase != Phase.SEATING or not self._held_open(round_):
                    raise NotExpectedError(f"no open seats to close (phase {round_.phase})")
            case Deal(card=card):
                rooms.check_deal(round_.phase, round_.dealt, card)
            case Arrange(player=player):
                self._seated(round_, player, Phase.ARRANGING)
                if player in round_.hands or player in round_.left:
                    raise NotExpectedError(f"{player} has already submitted an arrangement", reason="already_arranged")
                hand = self._hand(round_, command)
                if hand.mis_set and not command.confirmed and hand.instant_win(round_.settings.rules) is None:
                    first, second, _ = hand.strengths
                    weaker = "1" if first < second else "2"
                    raise GameError(
                        f"{player}'s arrangement is binh lủng: chi {weaker} is weaker than chi {int(weaker) + 1}, so "
                        "it loses every chi to every player; send it again confirmed to submit it as it is",
                        reason="binh_lung_unconfirmed",
                        params={"chi": weaker, "next": str(int(weaker) + 1)},
                    )
            case Leave(player=player):
                self._seated(round_, player, Phase.SEATING, Phase.DEALING, Phase.ARRANGING)
                if player in round_.left:
                    raise NotExpectedError(f"{player} has left already")
            case CloseArranging():
                if round_.phase != Phase.ARRANGING:
                    raise NotExpectedError(f"no arranging to close (phase {round_.phase})")
            case Reveal():
                if round_.phase != Phase.SHOWDOWN:
                    raise NotExpectedError(f"no showdown to move on (phase {round_.phase})")
            case Void(reason=reason):
                rooms.check_void(round_.phase, reason)
            case _:
                raise NotExpectedError(f"unknown command {command!r}")

    def apply(self, round_: Room, command: Command) -> list[Any]:
        self.verify(round_, command)
        before, events = round_.phase, list[RoomEvent]()
        match command:
            case Sit() | Ready() | Remove() | Short():
                events += round_.seating.apply(command)
            case CloseSeating():
                round_.seats_closed = True
            case Deal(card=card):
                round_.dealt.append(card)
                events.append(Dealt(len(round_.dealt)))
                if len(round_.dealt) == HAND_SIZE * len(round_.seats):
                    round_.phase = Phase.ARRANGING
            case Arrange(player=player):
                round_.hands[player] = self._hand(round_, command)
                events.append(Arranged(round_.seat_of(player)))
            case Leave(player=player):
                events += self._leave(round_, player)
            case CloseArranging():
                for player in round_.players:
                    if player not in round_.hands and player not in round_.left:
                        best = auto_arrange([NUMBER[card] for card in round_.dealt_to(player)], round_.settings.rules)
                        round_.hands[player] = Hand.of(best.chi1, best.chi2, best.chi3)
                        events.append(Arranged(round_.seat_of(player), auto=True))
            case Reveal():
                round_.revealed += 1
                events.append(Revealed(round_.revealed))
                if round_.revealed > CHIS:
                    round_.phase = Phase.SETTLED
            case Void():
                round_.phase = Phase.VOID
        if round_.phase == Phase.SEATING and round_.seating.all_ready() and not self._held_open(round_):
            round_.phase = Phase.DEALING
        if round_.phase == Phase.ARRANGING and all(p in round_.hands or p in round_.left for p in round_.players):
            round_.phase = Phase.SHOWDOWN
            round_.revealed = 1
            events.append(Revealed(1))
        if round_.phase != before:
            events.append(PhaseChanged(round_.phase))
        round_.commands.append(command)
        round_.events += events
        return events

    def _leave(self, round_: Room, player: str) -> list[Any]:
        if round_.phase == Phase.SEATING:  # not in a hand yet: the seat is free again, the hold comes back now
            return round_.seating.apply(Leave(player))
        round_.left.add(player)
        return [Left(round_.seat_of(player))]

    def commands(self, round_: Room) -> Sequence[Command]:
        return round_.commands

    def events(self, round_: Room) -> Sequence[Any]:
        return round_.events

    def move_to_dict(self, command: object) -> dict[str, Any] | None:
        match command:
            case Arrange(player=player, chi1=chi1, chi2=chi2, chi3=chi3, confirmed=confirmed):
                chis = [[str(card) for card in chi] for chi in (chi1, chi2, chi3)]
                return {"type": "arrange", "player": player, "chi": chis} | ({"confirmed": True} if confirmed else {})
            case CloseArranging():
                return {"type": "close_arranging"}
            case Reveal():
                return {"type": "reveal"}
        return None

    def move_from_dict(self, data: Mapping[str, Any]) -> Command | None:
        match data.get("type"):
            case "arrange":
                chi1, chi2, chi3 = (tuple(Card.from_code(code) for code in chi) for chi in data["chi"])
                # a stored arrangement was taken when it was made: an older log's binh lủng one had no confirmation
                return Arrange(str(data["player"]), chi1, chi2, chi3, confirmed=data.get("confirmed", True) is True)
            case "close_arranging":
                return CloseArranging()
            case "reveal":
                return Reveal()
        return None

    def timeout(self, round_: Room) -> Command:
        match round_.phase:
            case Phase.SEATING if (seat := round_.seating.waited_for()) is not None:
                return Remove(seat)
            case Phase.SEATING if self._held_open(round_):
                return CloseSeating()
            case Phase.ARRANGING:
                return CloseArranging()
            case Phase.SHOWDOWN:
                return Reveal()
        raise NotExpectedError(f"no window is open (phase {round_.phase})")

    # ---- reading a hand ----------------------------------------------------------------

    def expecting(self, round_: Room) -> Expecting:
        settings = round_.settings
        match round_.phase:
            case Phase.SEATING if self._held_open(round_):
                text = "free seats held open for newcomers"
                return Window("seating", settings.seating_ms, text=text, serial=round_.seating.serial)
            case Phase.SEATING:
                return round_.seating.window(settings.ready_ms)
            case Phase.DEALING:
                return rooms.next_card(round_.seats, round_.players, len(round_.dealt))
            case Phase.ARRANGING:
                return Window("arranging", settings.arranging_ms, text="players arranging their chi")
            case Phase.SHOWDOWN:
                text = f"the showdown of chi {round_.revealed}"
                return Window("showdown", settings.showdown_ms, text=text, serial=round_.revealed)
        return None

    def phase(self, round_: Room) -> str:
        return round_.phase

    def cards(self, round_: Room) -> list[Card]:
        return list(round_.dealt)

    def seats(self, round_: Room) -> dict[str, str]:
        return dict(round_.seats)

    def seat_hold(self, round_: Room) -> int:
        """The largest loss of a hand with the players seated now (two at least): each seat's hold grows as
        players sit down and shrinks as they leave, until the deal."""
        return round_.settings.rules.largest_loss(max(2, len(round_.seats))) * round_.settings.unit

    def hidden(self, round_: Room, audience: Audience) -> frozenset[Card]:
        """Each hand from everyone but its player until the showdown shows it, chi by chi."""
        if round_.phase in (Phase.SETTLED, Phase.VOID):
            return frozenset()
        own = audience.player if audience.kind == "player" else None
        shown = set(self._shown(round_))
        return frozenset(
            card for player in round_.players if player != own for card in round_.dealt_to(player) if card not in shown
        )

    def view(self, round_: Room, audience: Audience) -> dict[str, Any]:
        hidden = self.hidden(round_, audience)
        unseen = "received" if audience == DEALER else None
        view: dict[str, Any] = {
            "phase": round_.phase,
            "seats": sorted(round_.seats),
            "ready": sorted(round_.seat_of(p) for p in round_.seating.ready if p in round_.seats.values()),
            "arranged": sorted(round_.seat_of(p) for p in round_.hands),
            "left": sorted(round_.seat_of(p) for p in round_.left),
            "hands": {
                seat: {"cards": [unseen if card in hidden else str(card) for card in round_.dealt_to(player)]}
                for seat, player in sorted(round_.seats.items())
            },
        }
        if round_.phase in (Phase.SHOWDOWN, Phase.SETTLED):
            view["revealed"] = min(round_.revealed, CHIS)
            view["chi"] = {
                round_.seat_of(player): [
                    {"cards": codes(chi), "name": category_of(hand.strengths[index]).label}
                    for index, chi in enumerate(hand.chis[: view["revealed"]])
                ]
                for player, hand in round_.hands.items()
            }
        own = audience.player if audience.kind == "player" else None
        if (
            own is not None
            and own in round_.seats.values()
            and round_.phase == Phase.ARRANGING
            and own not in round_.left
        ):
            cards = [NUMBER[card] for card in round_.dealt_to(own)]
            best = auto_arrange(cards, round_.settings.rules)
            view["suggestion"] = {
                "chi": [codes(best.chi1), codes(best.chi2), codes(best.chi3)],
                "instant": str(best.instant) if best.instant else None,
            }
        if round_.phase == Phase.SETTLED:
            seats, result = self._scored(round_)
            by_seat = {player: round_.seat_of(player) for player in seats}
            scored = result_to_dict(seats, result)
            view["result"] = {
                "units": {by_seat[p]: units for p, units in scored["players"].items()},
                "pairs": [pair | {"a": by_seat[pair["a"]], "b": by_seat[pair["b"]]} for pair in scored["pairs"]],
            }
        return view

    def payouts(self, round_: Room) -> list[Payout] | None:
        if round_.phase != Phase.SETTLED:
            return None
        nets = {}
        if len(round_.seats) >= 2:
            _, result = self._scored(round_)
            rules = round_.settings.rules
            nets = money(result.totals, round_.settings.unit, rules.commission_bps)
        payouts = []
        for seat, player in sorted(round_.seats.items()):  # a freed seat's hold went back when it was freed
            outcome = nets.get(player)
            payouts.append(
                Payout(
                    player, rooms.SEAT_STAKE + seat, outcome.net if outcome else 0, outcome.commission if outcome else 0
                )
            )
        return payouts

    def result(self, round_: Room) -> dict[str, Any] | None:
        if round_.phase != Phase.SETTLED:
            return None
        if len(round_.seats) < 2:
            return {"players": {}, "pairs": []}
        seats, result = self._scored(round_)
        return result_to_dict(seats, result)

    # ---- internals ---------------------------------------------------------------------

    def _held_open(self, round_: Room) -> bool:
        """Everyone seated is ready, a seat is free and the room holds free seats open (``seating_ms``), not yet
        closed: the deal waits for the seating window's end."""
        seating = round_.seating
        free = len(seating.seats) < len(seating.names)
        return bool(round_.settings.seating_ms) and not round_.seats_closed and free and seating.all_ready()

    def _seated(self, round_: Room, player: str, *phases: str) -> None:
        if player not in round_.seats.values():
            raise NotYourMoveError(f"{player} has no seat in this hand", reason="not_seated")
        if round_.phase not in phases:
            raise NotExpectedError(f"not now (phase {round_.phase})")

    def _hand(self, round_: Room, command: Arrange) -> Hand:
        """The submitted arrangement, if it is exactly the player's 13 cards in chi of 5, 5 and 3."""
        mine = set(round_.dealt_to(command.player))
        given = command.chi1 + command.chi2 + command.chi3
        if sorted(map(NUMBER.__getitem__, given)) != sorted(map(NUMBER.__getitem__, mine)):
            message = f"{command.player}'s arrangement must use exactly the 13 cards dealt to them"
            raise GameError(message, reason="not_your_cards")
        first, second, third = ([NUMBER[card] for card in chi] for chi in (command.chi1, command.chi2, command.chi3))
        return Hand.of(first, second, third, who=command.player)

    def _shown(self, round_: Room) -> list[Card]:
        if round_.phase != Phase.SHOWDOWN:
            return []
        return [CARDS[n] for hand in round_.hands.values() for chi in hand.chis[: round_.revealed] for n in chi]

    def _scored(self, round_: Room) -> tuple[dict[str, Seat], Any]:
        seats: dict[str, Seat] = {
            player: LEFT if player in round_.left else round_.hands[player] for player in round_.players
        }
        return seats, score_table(seats, round_.settings.rules)


MAUBINH = MauBinh()
