"""Exceptions of the round controller, each with a stable ``code``; the process says them in one line and stops."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.shoe.signing import KeyRing


class ControllerError(RuntimeError):
    code = "controller_error"


class LeaseHeldError(ControllerError):
    """Another controller is writing the table."""

    code = "lease_held"


class UnsignedShoeError(ControllerError):
    """A table whose shoe has no signing key here: any client of the broker could deal at it."""

    code = "unsigned_shoe"

    def __init__(self, unsigned: list[tuple[str, str]], keys: KeyRing) -> None:
        where = f" in {keys.directory}" if keys.directory is not None else ""
        super().__init__(
            "; ".join(
                f"table {table}: shoe {shoe} has no signing key{where}: make one (studio shoe-key new --shoe-id "
                f"{shoe}) and start the shoe with it, or allow unsigned cards (--allow-unsigned: tests and benchmarks "
                "only)"
                for table, shoe in unsigned
            )
        )
        self.tables = [table for table, _shoe in unsigned]
