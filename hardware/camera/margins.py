"""How far each card of a calibration stands from its nearest look-alike: the table an operator reads before going live.

Each calibration photo is read back with the calibration made from it (``self_check``): its card's score over the best
*other* card's is its **margin**, and that other card its nearest look-alike. On a live frame (another angle, another
light) a card's margin shrinks; a card whose margin on its own photo is under **twice** the margin its reader needs to
name a card at all is marked **weak**: retake its photo (and its look-alike's) first, or expect it to be read as
unknown more often.
"""

from __future__ import annotations

from dataclasses import dataclass

from hardware.camera import learned, recognizer
from hardware.camera.recognizer import Reading


@dataclass(frozen=True)
class Margin:
    """One card's row of the margin table."""

    card: str
    read_as: str | None
    confidence: float
    margin: float
    nearest: str | None
    weak: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "card": self.card, "read_as": self.read_as, "confidence": round(self.confidence, 3),
            "margin": round(self.margin, 3), "nearest": self.nearest, "weak": self.weak,
        }  # fmt: skip


def weak_margin(method: str) -> float:
    """Twice the margin the reader needs to name a card at its default threshold (``learned`` or ``glyphs``)."""
    if method == "learned":
        low, high = learned.MARGIN
        needed = low + (learned.DEFAULT_THRESHOLD - 0.5) / 0.5 * (high - low)  # confidence 0.5 at low, 1.0 at high
    else:
        needed = (recognizer.DEFAULT_THRESHOLD - 0.5) / recognizer.MARGIN_WEIGHT  # confidence 0.5 + weight × margin
    return 2 * needed


def margin_table(readings: dict[str, Reading], weak: float) -> list[Margin]:
    """Every card's margin and nearest look-alike, weakest first (then by card), those under ``weak`` marked."""
    rows = [
        Margin(code, r.card, r.confidence, r.margin, None if r.runner_up is None else str(r.runner_up), r.margin < weak)
        for code, r in readings.items()
    ]
    return sorted(rows, key=lambda row: (row.margin, row.card))
