"""Exceptions of the Pok Deng engine. All are ``ValueError``s: they describe bad input."""


class PokDengError(ValueError):
    """Base of every Pok Deng error."""


class SettingsError(PokDengError):
    """A table setting is unknown or out of range."""


class IllegalActionError(PokDengError):
    """The round is not waiting for this action now."""


class WagerError(PokDengError):
    """A wager that breaks the betting rules or the table limits."""


class InsuranceError(PokDengError):
    """An insurance purchase that is not offered or of a wrong amount."""


class DecisionError(PokDengError):
    """A draw/stand choice by someone who may not make it."""


class TranscriptError(PokDengError):
    """A round transcript that cannot be replayed."""
