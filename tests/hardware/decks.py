"""The recorded deck designs (``fixtures/decks``), each learned as a studio would: one photo of each card."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from hardware.camera.devset import calibration_set, load_deck
from hardware.camera.learned import DeckReader, learn

DECKS = Path(__file__).resolve().parents[2] / "fixtures" / "decks"


@cache
def photographed(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The deck's faces, and its calibration photos: one of each card (rendering them is the slow part: once)."""
    faces = load_deck(DECKS / name)
    return faces, calibration_set(faces, 1)


def learned(name: str) -> tuple[dict[str, Any], DeckReader]:
    """The deck's faces, and the reader calibrated on one photo of each."""
    faces, photos = photographed(name)
    return faces, DeckReader(learn(photos))
