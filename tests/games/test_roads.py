"""The roads of a shoe against shoes worked by hand, and the ask road against the road it predicts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.games.roads import DERIVED, big_road, derived_roads, roads

SIDES = ("player", "banker")
NAMES = {"B": "banker", "P": "player", "T": "tie"}


def marks(text: str) -> list[dict[str, str]]:
    return [{"winner": NAMES[letter]} for letter in text.replace(" ", "")]


def shape(columns: list[list[dict[str, object]]]) -> list[str]:
    return ["".join(str(cell["winner"])[0].upper() + "t" * int(str(cell["ties"])) for cell in c) for c in columns]


R, B = "red", "blue"
SHOE = "BBB PP BT PPP BB"  # worked on paper: the Big Road is BBB | PP | B(1 tie) | PPP | BB


def test_the_big_road_streaks_each_side_and_counts_a_tie_on_the_cell_before_it() -> None:
    assert shape(big_road(marks(SHOE))) == ["BBB", "PP", "Bt", "PPP", "BB"]
    assert shape(big_road(marks("TT B P"))) == ["Btt", "P"]  # ties before the first win: on its first cell
    assert big_road(marks("TT")) == []


def test_the_derived_roads_of_a_hand_worked_shoe() -> None:
    shown = roads(marks(SHOE), SIDES)
    # Big Eye Boy starts at column 2's second cell: red (column 1 reaches row 2); column 3 opens: columns 2 and 1
    # differ, blue; column 4 opens: 3 and 2 differ, blue; its 2nd cell: column 3 stops one row above, blue; its 3rd:
    # column 3 stopped earlier, red; column 5 opens: 4 and 3 differ, blue; its 2nd cell: column 4 reaches it, red
    assert shown["big_eye_boy"] == [[R], [B, B, B], [R], [B], [R]]
    assert shown["small_road"] == [[B], [R], [B, B, B]]
    assert shown["cockroach_pig"] == [[R, R, R, R]]
    assert shown["counts"] == {"player": 5, "banker": 6, "tie": 1} and shown["coups"] == 12
    assert [mark["winner"] for mark in shown["bead_plate"]] == [NAMES[c] for c in SHOE.replace(" ", "")]


def test_the_ask_road_of_a_hand_worked_shoe() -> None:
    asked = roads(marks(SHOE), SIDES)["ask"]
    assert asked["banker"] == {"big_eye_boy": R, "small_road": R, "cockroach_pig": B}
    assert asked["player"] == {"big_eye_boy": B, "small_road": B, "cockroach_pig": R}
    early = roads(marks("B"), SIDES)["ask"]  # no derived road would have started yet
    assert early["player"] == early["banker"] == {"big_eye_boy": None, "small_road": None, "cockroach_pig": None}
    assert roads(marks("B P"), SIDES)["ask"]["player"]["big_eye_boy"] == B  # it starts at column 2's second cell


def test_dragon_tiger_shows_the_bead_plate_and_the_big_road_only() -> None:
    shown = roads([{"winner": "dragon"}, {"winner": "tie"}, {"winner": "tiger"}], ("dragon", "tiger"), derived=False)
    assert set(shown) == {"coups", "counts", "bead_plate", "big_road"}
    assert shown["big_road"] == [[{"winner": "dragon", "ties": 1}], [{"winner": "tiger", "ties": 0}]]


@given(st.text("BPT", max_size=60), st.sampled_from("BP"))
def test_the_ask_road_shows_what_the_next_coup_adds_to_each_derived_road(shoe: str, next_: str) -> None:
    asked = roads(marks(shoe), SIDES)["ask"][NAMES[next_]]
    before = derived_roads(big_road(marks(shoe)))
    after = derived_roads(big_road(marks(shoe + next_)))
    for name in DERIVED:
        added = after[name][len(before[name]) :]
        assert added == ([] if asked[name] is None else [asked[name]])


def first_marked(columns: list[list[dict[str, object]]], offset: int) -> int:
    """The Big Road cell (counted in order) a derived road starts at: the second cell of column ``offset`` + 1 or,
    if that column has one cell, the first of the column after; past the end while neither exists."""
    before = sum(len(column) for column in columns[:offset])
    if len(columns) > offset and len(columns[offset]) > 1:
        return before + 1
    return before + (len(columns[offset]) if len(columns) > offset else 0)


@given(st.text("BPT", max_size=80))
def test_each_derived_road_marks_every_big_road_cell_from_its_start(shoe: str) -> None:
    columns = big_road(marks(shoe))
    cells = sum(len(column) for column in columns)
    for name, offset in DERIVED.items():
        assert len(derived_roads(columns)[name]) == max(0, cells - first_marked(columns, offset))
