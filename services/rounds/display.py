"""How a table is shown to viewers: the overlay's delay, the table's language and how long a result stays up (no
round's cards or money depend on it).

The overlay's data arrives before the viewers' video (stream latency is 1–7 s), so the overlay holds every change
back by ``overlay_delay_ms`` to show a card when the viewer sees it dealt. ``language`` is the overlay's language
(each page may also be asked for one with ``?lang=``). ``result_pause_ms`` is how long a round's result and payouts
stay on the pages and the overlay before the controller opens the next round (``None``: the controller's own
setting); a person needs 6–8 s to read a result, and the default is 7 s.
"""

from __future__ import annotations

from typing import Any, Final

from services.db.unit_of_work import run_transaction
from services.rounds.errors import RoundError
from services.rounds.models import GameTable, locked_table
from services.rounds.service import RoundService

LANGUAGES: Final = ("en", "vi", "th")  # English, Vietnamese, Thai: the audiences of these games
MAX_DELAY_MS: Final = 30_000
RESULT_PAUSE_MS: Final = (1_000, 60_000)  # a table's result pause may be set within this range


class DisplayError(RoundError):
    code = "invalid_display"


def checked(overlay_delay_ms: int | None, language: str | None, result_pause_ms: int | None = None) -> None:
    if overlay_delay_ms is not None and not 0 <= overlay_delay_ms <= MAX_DELAY_MS:
        raise DisplayError(f"overlay_delay_ms must be 0–{MAX_DELAY_MS}, got {overlay_delay_ms}")
    if language is not None and language not in LANGUAGES:
        raise DisplayError(f"language {language!r} is not one of {', '.join(LANGUAGES)}")
    low, high = RESULT_PAUSE_MS
    if result_pause_ms is not None and not low <= result_pause_ms <= high:
        raise DisplayError(f"result_pause_ms must be {low}–{high} (a result people can read), got {result_pause_ms}")


def change_display(
    service: RoundService,
    table_id: str,
    overlay_delay_ms: int | None = None,
    language: str | None = None,
    result_pause_ms: int | None = None,
) -> None:
    """Set what is given; the rest stays (a result pause applies from the table's next round)."""
    checked(overlay_delay_ms, language, result_pause_ms)

    def work(session: Any) -> None:
        table = locked_table(session, table_id)
        if overlay_delay_ms is not None:
            table.overlay_delay_ms = overlay_delay_ms
        if language is not None:
            table.language = language
        if result_pause_ms is not None:
            table.result_pause_ms = result_pause_ms

    run_transaction(service.sessions, work)


def default_result_pause(service: RoundService, table_id: str) -> None:
    """The table's result pause back to the controller's own setting (from its next round)."""

    def work(session: Any) -> None:
        locked_table(session, table_id).result_pause_ms = None

    run_transaction(service.sessions, work)


def display_of(table: GameTable) -> dict[str, Any]:
    return {"overlay_delay_ms": table.overlay_delay_ms, "language": table.language,
            "result_pause_ms": table.result_pause_ms}  # fmt: skip
