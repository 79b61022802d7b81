"""Mậu Binh (13-card Chinese poker): hand ranking, showdown scoring and auto-arrange (pure, synchronous).

Terms, once: a *chi* is one of the three rows a player arranges 13 cards into — chi 1 (5 cards),
chi 2 (5) and chi 3 (3), which must not get stronger from chi 1 to chi 3; a hand that does is
*binh lủng* (mis-set). Winning all three chi against one opponent is *sập 3 chi* (a scoop).
*Mậu binh thắng trắng* are the dealt hands that win at once (``InstantWin``). Amounts are in the
room's unit, the stake per chi. Cards are numbers 0–51 (see ``cards``); codes appear only at the edges.
"""

from services.games.maubinh.arrange import Arrangement, auto_arrange, expected_units
from services.games.maubinh.cards import codes, parse
from services.games.maubinh.errors import HandError, MauBinhError, SettingsError, TableError
from services.games.maubinh.hand import HAND_SIZE, LEFT, Hand, Left, Seat
from services.games.maubinh.instant import instant_win
from services.games.maubinh.ranking import Category, category_of, strength, win_units
from services.games.maubinh.scoring import Money, PairResult, TableResult, money, score_pair, score_table
from services.games.maubinh.settings import INSTANT_WINS, InstantWin, MauBinhSettings
from services.games.maubinh.showdown import score_to_dict

__all__ = [
    "HAND_SIZE",
    "INSTANT_WINS",
    "LEFT",
    "Arrangement",
    "Category",
    "Hand",
    "HandError",
    "InstantWin",
    "Left",
    "MauBinhError",
    "MauBinhSettings",
    "Money",
    "PairResult",
    "Seat",
    "SettingsError",
    "TableError",
    "TableResult",
    "auto_arrange",
    "category_of",
    "codes",
    "expected_units",
    "instant_win",
    "money",
    "parse",
    "score_pair",
    "score_table",
    "score_to_dict",
    "strength",
    "win_units",
]
