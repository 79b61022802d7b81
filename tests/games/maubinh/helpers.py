"""Hands for the Mậu Binh tests, written as space-separated card codes."""

from __future__ import annotations

from services.games.maubinh import Hand, MauBinhSettings, parse

DEFAULT = MauBinhSettings()


def c(text: str) -> tuple[int, ...]:
    """Card numbers of space-separated codes: ``c("AS KD")``."""
    return parse(text.split())


def hand(chi1: str, chi2: str, chi3: str) -> Hand:
    return Hand.of(c(chi1), c(chi2), c(chi3))
