"""One flow written once for both worlds: a coroutine whose steps never suspend, run to its end in the caller's
thread — the same coroutine, given steps that do suspend, runs on an event loop instead.

``inline(flow())`` is for flows such as a stake's (``services.rounds.stakes``) or a wallet call's retries
(``services.wallet.outbox``): written as ``async def`` over injected steps, they run here when the steps are plain
calls wrapped in ``async def`` (a worker thread's request), and awaited when the steps are the event loop's own.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def inline(flow: Coroutine[Any, Any, T]) -> T:
    """The coroutine run to its end here: its value, or what it raised (a step that waited for an event loop is a
    programming error: a flow run inline must be given steps that never do)."""
    try:
        flow.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    flow.close()
    raise RuntimeError(f"{getattr(flow, '__qualname__', flow)} waited for an event loop; run inline it may not")
