"""The recogniser that learns the deck, meeting a third design as a stranger: Adrian Kennard's four-colour,
jumbo-index English-pattern deck (``fixtures/decks/kennard-four-colour-jumbo``: clubs green and diamonds blue, so
colour no longer tells a diamond from a spade; a rank a fifth of the card high over a pip nearly as large, small pips
in the middle; the courts small). It was added after every threshold of the reader was set and tuned none:
calibrated on its one photo per card, then read. It did change the reader once: it read spades and diamonds as each
other (three of 1,000 frames), and the reader has measured blue and green ink since, as it measures red.

Its frames meet the real world besides glare, blur, a light's fall-off, white balance, noise and JPEG: a hand reaching
onto a card (over its index corner, or at a corner without one) and a white vignette that melts the edges of the cards
near the border into the background (``hardware.camera.devset.REAL_WORLD``). A card may be left unknown or unfound
there; it must never be read as another card."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hardware.camera.devset import (
    MARKS,
    REAL_WORLD,
    Effects,
    background,
    camera,
    card_quad,
    hand,
    index_regions,
    lay,
    scenes,
    score,
)
from hardware.camera.learned import DeckReader
from tests.hardware.decks import learned

pytestmark = pytest.mark.xdist_group("deck-kennard")  # its module fixtures (a calibration) once, on one worker


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def deck() -> tuple[dict[str, Any], DeckReader]:
    return learned("kennard-four-colour-jumbo")


def test_held_out_frames_of_a_stranger_with_hands_and_a_white_vignette_have_no_wrong_card(
    deck: tuple[dict[str, Any], DeckReader],
) -> None:
    faces, reader = deck
    tally = score(reader.recognize, scenes(faces, 3000, 40, **REAL_WORLD))
    kinds = tally.kinds
    # the frames met what they are meant to: a hand over an index and beside it, a white vignette melting an edge
    assert {mark for mark in MARKS if kinds.get(mark)} == set(MARKS), kinds.keys()
    assert sum(kinds["hand over index"].values()) >= 5 and sum(kinds["hand"].values()) >= 5, kinds
    assert sum(kinds["white edge"].values()) >= 4 and sum(kinds["white vignette"].values()) >= 10, kinds
    assert tally.cards >= 90
    # the one failure a live table cannot take: not one card read as another, nor a card read where there is none
    assert tally.wrong == 0 and tally.hard_wrong == 0 and tally.phantom == 0, tally.wrongs
    assert all(counts["wrong"] == 0 for counts in kinds.values()), kinds
    # found and read right (not hard: a hand beside the index, a vignette short of melting an edge count here): here
    # 105 and 104 of 106 cards, plain ones 72 of 72 right (before blue and green ink were measured and the frame was
    # looked at above the table's own light: 101, 86 and 64; 1,000 frames: docs/hardware.md)
    found = tally.right + tally.unknown
    assert found >= 0.95 * tally.cards, tally.as_dict()
    assert tally.right >= 0.95 * tally.cards, tally.as_dict()
    plain = kinds["plain"]
    assert plain["right"] >= 0.97 * sum(plain.values()) and plain["missed"] == 0, plain
    # a card in the vignette's glow, its edge melted or not, is found (here 26 of 26; with one threshold: 18)
    vignetted = [kinds[kind] for kind in ("white vignette", "white edge")]
    assert sum(counts["missed"] for counts in vignetted) <= 0.1 * sum(sum(c.values()) for c in vignetted), vignetted


def test_a_hand_over_an_index_corner_gives_unknown_or_the_right_card(deck: tuple[dict[str, Any], DeckReader]) -> None:
    """One card at a time on a plain table, a hand's fingers over one of its index corners (the top-left one or the
    bottom-right one in turn): the look-alikes of this deck (a spade and a diamond are both dark ink) and others."""
    faces, reader = deck
    for number, code in enumerate(("AS", "AD", "7S", "7D", "2C", "2S", "JH", "QC", "9S", "9D")):
        covered = number % 2
        rng = np.random.default_rng([29, covered, number])
        frame = background(rng, ("felt", "wood", "cloth")[number % 3], 1280, 720)
        quad = card_quad(rng, faces[code], (640.0, 360.0), 300, 0.03)
        lay(frame, faces[code], quad, (5, 5, 0.3))
        corner = quad[2 * covered]
        tips = corner + 0.35 * (quad.mean(axis=0) - corner)
        outward = corner - quad.mean(axis=0)
        cover = hand(rng, frame, (float(tips[0]), float(tips[1])), math.atan2(outward[1], outward[0]), 300)
        region = index_regions(quad)[covered].round().astype(int)
        assert (cover[region[:, 1], region[:, 0]] > 0.5).mean() > 0.15, "the hand covers the index corner"
        read = [d.card for d in reader.recognize(camera(rng, frame, 0.5, 0))]
        assert set(read) <= {code, None}, (code, read)


def near(detection: Any, card: Any) -> bool:
    centre = np.mean(np.array(detection.outline, np.float32), axis=0)
    return bool(np.linalg.norm(centre - card.quad.mean(axis=0)) < 0.25 * np.linalg.norm(card.quad[3] - card.quad[0]))


@pytest.mark.parametrize(
    ("number", "effects", "code", "misread"),
    [
        (184, REAL_WORLD, "9S", "9D"),  # a hand's fingertips at a corner without an index, both indices in view
        (254, {}, "AS", "AD"),  # heavy blur (hard)
        (288, {}, "7D", "7S"),  # glare over one index (hard)
    ],
)
def test_the_spades_and_diamonds_it_once_read_as_each_other_are_read_right(
    deck: tuple[dict[str, Any], DeckReader], number: int, effects: Effects, code: str, misread: str
) -> None:
    """The three wrong reads this deck met first (seed 1000's frames in ``bench/camera.py --devset``, the first with
    the real-world effects): a diamond is dark ink like a spade here, and a reader that measured red ink and shape
    alone read one as the other with the confidence it needs. It measures blue and green ink now (the deck's pips):
    each is the right card."""
    faces, reader = deck
    [scene] = scenes(faces, 1000, 1, first=number, **effects)
    [card] = [placed for placed in scene.cards if placed.code == code]
    read = [d.card for d in reader.recognize(scene.frame) if near(d, card)]
    assert misread not in read and read == [code], (code, read)
