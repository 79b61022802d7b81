"""``studio dragontiger replay FILE`` and ``studio dragontiger rtp``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from services.cli.coups import register_game, whole


def register(commands: Any) -> None:
    from services.games.dragontiger.transcript import replay_to_dict

    register_game(commands, "dragontiger", "Dragon Tiger", replay_to_dict, _returns, _options)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--decks", type=whole(1, 8, "a shoe's decks"), default=8, help="decks in the shoe (8)")
    parser.add_argument("--tie-pays", type=whole(1, 100, "what a tie pays"), default=8, help="a Tie pays N:1 (8)")
    parser.add_argument(
        "--suited-tie-pays", type=whole(1, 1_000, "what a suited tie pays"), default=50,
        help="a Suited Tie pays N:1 (50)",
    )  # fmt: skip
    parser.add_argument(
        "--no-tie-half-back", dest="tie_half_back", action="store_false",
        help="Dragon and Tiger lose all on a tie (default: half comes back)",
    )  # fmt: skip


def _returns(settings: Mapping[str, Any]) -> dict[str, Fraction]:
    from services.games.dragontiger.rules import DragonTigerSettings, returns

    return returns(DragonTigerSettings.of(settings))
