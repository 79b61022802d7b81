"""How a table is shown to viewers: the overlay's delay and the table's language (no round or money depends on it).

The overlay's data arrives before the viewers' video (stream latency is 1–7 s), so the overlay holds every change
back by ``overlay_delay_ms`` to show a card when the viewer sees it dealt. ``language`` is the overlay's language
(each page may also be asked for one with ``?lang=``).
"""

from __future__ import annotations

from typing import Any, Final

from services.db.unit_of_work import run_transaction
from services.rounds.errors import RoundError
from services.rounds.models import GameTable, locked_table
from services.rounds.service import RoundService

LANGUAGES: Final = ("en", "vi", "th")  # English, Vietnamese, Thai: the audiences of these games
MAX_DELAY_MS: Final = 30_000


class DisplayError(RoundError):
    code = "invalid_display"


def checked(overlay_delay_ms: int | None, language: str | None) -> None:
    if overlay_delay_ms is not None and not 0 <= overlay_delay_ms <= MAX_DELAY_MS:
        raise DisplayError(f"overlay_delay_ms must be 0–{MAX_DELAY_MS}, got {overlay_delay_ms}")
    if language is not None and language not in LANGUAGES:
        raise DisplayError(f"language {language!r} is not one of {', '.join(LANGUAGES)}")


def change_display(
    service: RoundService, table_id: str, overlay_delay_ms: int | None = None, language: str | None = None
) -> None:
    """Set what is given; the rest stays."""
    checked(overlay_delay_ms, language)

    def work(session: Any) -> None:
        table = locked_table(session, table_id)
        if overlay_delay_ms is not None:
            table.overlay_delay_ms = overlay_delay_ms
        if language is not None:
            table.language = language

    run_transaction(service.sessions, work)


def display_of(table: GameTable) -> dict[str, Any]:
    return {"overlay_delay_ms": table.overlay_delay_ms, "language": table.language}
