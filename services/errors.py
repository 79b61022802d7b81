"""The root of the packages' refusals: an exception with a stable ``code`` (what kind of refusal, for programs), a
message (English, for logs and the people integrating), and where the refusing code names it a ``reason`` (finer
than the code: ``does_not_beat``, ``seat_taken``…) with its ``params`` (JSON values: card codes, seats, numbers),
from which the pages say the refusal in their reader's language. The API alone says which HTTP status each
answers (``services.api.errors``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class Refusal(ValueError):
    code: ClassVar[str] = "invalid_request"

    def __init__(self, message: str = "", *, reason: str = "", params: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.params = dict(params or {})
