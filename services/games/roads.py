"""The roads of a shoe: the scoreboards a baccarat (or Dragon Tiger) player reads, built from the shoe's results.

A shoe's results are its coups in order, each a mark: ``{"winner": side or "tie", ...}`` and the flags its game shows
(pairs). The two sides are the game's (Player and Banker; Dragon and Tiger).

- **Bead Plate**: every coup in order, ties included, with its flags (a page lays it out six to a column).
- **Big Road**: a column per streak of one side; a tie is counted on the cell before it (ties before the shoe's first
  win are counted on its first cell). Columns are logical: a page bends a column longer than six into a dragon tail.
- **Big Eye Boy, Small Road, Cockroach Pig** (offsets 1, 2, 3): a red or blue mark for each Big Road cell from where the
  road starts — the second cell of column ``k`` + 1 or, if that column has one cell, the first of the column after.
  A cell that opens a column compares the two columns before it, ``k`` apart: red when they are as long, blue when not.
  A cell further down a column looks ``k`` columns to its left: red when that column reaches the cell's row, blue when
  it stops exactly one row above it, red when it stops earlier. Each derived road is laid out in streaks of one colour,
  as the Big Road is.
- **Ask road**: the mark each derived road would add if the next coup went to one side, or to the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TIE = "tie"
RED, BLUE = "red", "blue"
DERIVED = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}


def big_road(marks: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """The Big Road's columns, each a streak of one side's wins, every cell ``{"winner", "ties"}``."""
    columns: list[list[dict[str, Any]]] = []
    leading_ties = 0
    for mark in marks:
        winner = mark["winner"]
        if winner == TIE:
            if columns:
                columns[-1][-1]["ties"] += 1
            else:
                leading_ties += 1
            continue
        cell = {"winner": winner, "ties": leading_ties if not columns else 0}
        if columns and columns[-1][0]["winner"] == winner:
            columns[-1].append(cell)
        else:
            columns.append([cell])
    return columns


def derived_colour(lengths: Sequence[int], row: int, offset: int) -> str | None:
    """The colour a derived road (``offset`` 1–3) gives the cell at ``row`` of the last column, whose earlier columns
    are ``lengths[:-1]`` long; None where that road has not started yet."""
    column = len(lengths) - 1
    if row == 0:
        if column < offset + 1:
            return None
        return RED if lengths[column - 1] == lengths[column - 1 - offset] else BLUE
    if column < offset:
        return None
    beside = lengths[column - offset]
    return BLUE if beside == row else RED  # reaches the row (longer), or stopped two or more rows above: red


def derived_roads(columns: Sequence[Sequence[Any]]) -> dict[str, list[str]]:
    """Each derived road's marks in order, one per Big Road cell from where the road starts."""
    roads: dict[str, list[str]] = {name: [] for name in DERIVED}
    lengths: list[int] = []
    for column in columns:
        lengths.append(0)
        for row in range(len(column)):
            lengths[-1] = row + 1
            for name, offset in DERIVED.items():
                colour = derived_colour(lengths, row, offset)
                if colour is not None:
                    roads[name].append(colour)
    return roads


def streaks(marks: Sequence[str]) -> list[list[str]]:
    """Marks laid out as a road: a column per run of one mark."""
    columns: list[list[str]] = []
    for mark in marks:
        if columns and columns[-1][0] == mark:
            columns[-1].append(mark)
        else:
            columns.append([mark])
    return columns


def ask(columns: Sequence[Sequence[Mapping[str, Any]]], winner: str) -> dict[str, str | None]:
    """What each derived road would add if the next coup went to ``winner`` (None: that road would not have
    started)."""
    lengths = [len(column) for column in columns]
    if lengths and columns[-1][0]["winner"] == winner:
        lengths[-1] += 1
    else:
        lengths.append(1)
    return {name: derived_colour(lengths, lengths[-1] - 1, offset) for name, offset in DERIVED.items()}


def roads(marks: Sequence[Mapping[str, Any]], sides: tuple[str, str], derived: bool = True) -> dict[str, Any]:
    """Every road of a shoe whose results so far are ``marks``, with the count of each result; the derived roads and
    the ask road only where ``derived`` (baccarat's, not Dragon Tiger's)."""
    columns = big_road(marks)
    counts = {side: 0 for side in (*sides, TIE)}
    for mark in marks:
        counts[mark["winner"]] += 1
    shown: dict[str, Any] = {"coups": len(marks), "counts": counts, "bead_plate": [dict(mark) for mark in marks]}
    shown["big_road"] = columns
    if derived:
        shown |= {name: streaks(marks_) for name, marks_ in derived_roads(columns).items()}
        shown["ask"] = {side: ask(columns, side) for side in sides}
    return shown
