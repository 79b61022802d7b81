"""Exceptions of the cards package; all are ``ValueError`` so bad input is one family."""


class CardError(ValueError):
    """Base of every card-level error."""

    code = "invalid_card"


class InvalidCardCodeError(CardError):
    """A string that is not a card code."""


class DuplicateCardError(CardError):
    """A card seen a second time since the last shuffle."""
