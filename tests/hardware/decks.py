"""The recorded deck designs (``fixtures/decks``), each learned as a studio would: one photo of each card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hardware.camera.devset import calibration_set, load_deck
from hardware.camera.learned import DeckReader, learn

DECKS = Path(__file__).resolve().parents[2] / "fixtures" / "decks"


def learned(name: str) -> tuple[dict[str, Any], DeckReader]:
    """The deck's faces, and the reader calibrated on one photo of each."""
    faces = load_deck(DECKS / name)
    return faces, DeckReader(learn(calibration_set(faces, 1)))
