"""The composition root of the studio's games: each game with its adapter, in one frozen catalog.

This is the one module that names the games. The services receive the catalog (``RoundService(...,
games=STUDIO_GAMES)``) and look a table's game up there; neither the game port (``services.games.base``) nor the
adapter contract (``services.rounds.adapters``) imports a game. A new game is added here, and nowhere else in shared
code.
"""

from __future__ import annotations

from services.rounds import maubinh, pokdeng, tienlen
from services.rounds.adapters import Catalog
from services.rounds.coups import BACCARAT_ADAPTER, DRAGON_TIGER_ADAPTER

STUDIO_GAMES = Catalog.of(pokdeng.ADAPTER, tienlen.ADAPTER, maubinh.ADAPTER, BACCARAT_ADAPTER, DRAGON_TIGER_ADAPTER)
