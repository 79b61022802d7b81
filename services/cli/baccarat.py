"""``studio baccarat replay FILE`` and ``studio baccarat rtp``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from services.cli.coups import register_game, whole


def register(commands: Any) -> None:
    from services.games.baccarat.transcript import replay_to_dict

    register_game(commands, "baccarat", "Punto Banco", replay_to_dict, _returns, _options)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--decks", type=whole(1, 8, "a shoe's decks"), default=8, help="decks in the shoe (8)")
    parser.add_argument(
        "--banker-commission-bps", type=whole(0, 2_500, "a commission in basis points"), default=500,
        help="the commission on a Banker win, in basis points (500: 5 %%)",
    )  # fmt: skip
    parser.add_argument("--tie-pays", type=whole(1, 100, "what a tie pays"), default=8, help="a Tie pays N:1 (8)")
    parser.add_argument("--pair-pays", type=whole(1, 100, "what a pair pays"), default=11, help="a pair pays N:1 (11)")
    parser.add_argument("--super6", action="store_true", help="no commission; a Banker win on 6 pays 1:2")


def _returns(settings: Mapping[str, Any]) -> dict[str, Fraction]:
    from services.games.baccarat.exact import returns
    from services.games.baccarat.settings import BaccaratSettings

    return returns(BaccaratSettings.of(settings))
