"""What each baccarat bet wins or loses on a finished coup, in minor units (the stake itself aside)."""

from __future__ import annotations

from services.games.baccarat.rules import Coup, Winner, total
from services.games.baccarat.settings import BaccaratSettings
from services.games.coups import Outcome

SPOTS = ("player", "banker", "tie", "player_pair", "banker_pair")


def outcome(spot: str, stake: int, coup: Coup, settings: BaccaratSettings) -> Outcome:
    """Player 1:1; Banker 1:1 less commission (``stake × (10000 − bps) // 10000``) or, under super6, 1:1 and 1:2 on
    a Banker 6; both push on a tie. Tie ``tie_pays``:1; a pair ``pair_pays``:1."""
    winner = coup.winner
    match spot:
        case "player" | "banker" if winner is Winner.TIE:
            return Outcome(0)
        case "player":
            return Outcome(stake if winner is Winner.PLAYER else -stake)
        case "banker" if winner is Winner.PLAYER:
            return Outcome(-stake)
        case "banker" if settings.super6:
            return Outcome(stake // 2 if total(coup.banker) == 6 else stake)
        case "banker":
            net = stake * (10_000 - settings.banker_commission_bps) // 10_000
            return Outcome(net, stake - net)
        case "tie":
            return Outcome(stake * settings.tie_pays if winner is Winner.TIE else -stake)
        case "player_pair":
            return Outcome(stake * settings.pair_pays if coup.player_pair else -stake)
        case "banker_pair":
            return Outcome(stake * settings.pair_pays if coup.banker_pair else -stake)
    raise ValueError(f"no bet {spot!r} (bets: {', '.join(SPOTS)})")
