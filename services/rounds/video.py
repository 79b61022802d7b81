"""Links to the studio's video recorder: a table's ``video_url_template`` names where a moment of its video plays.

A template is an http(s) URL with any of the fields ``{table}``, ``{round}``, ``{video_tc}`` (the studio video
timecode of a card, HH:MM:SS:FF) and ``{video_ref}`` (the recording the round was opened with), e.g.
``https://recorder.local/{table}?tc={video_tc}``. Each value is URL-quoted where it goes in.
"""

from __future__ import annotations

import string
from typing import Final
from urllib.parse import quote

from services.rounds.errors import RoundError

FIELDS: Final = ("table", "round", "video_tc", "video_ref")
MAX_LENGTH: Final = 500


class VideoTemplateError(RoundError):
    code = "invalid_video_url_template"


def checked_template(template: str) -> str:
    """``template`` if it is a usable link template ("" for none); else a ``VideoTemplateError`` naming the fault."""
    if template == "":
        return template
    if len(template) > MAX_LENGTH:
        raise VideoTemplateError(f"video_url_template is {len(template)} characters long (at most {MAX_LENGTH})")
    if not template.startswith(("https://", "http://")) or any(c.isspace() for c in template):
        raise VideoTemplateError(f"video_url_template {template!r} is not an http(s) URL without spaces")
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template)]
    except ValueError as error:
        raise VideoTemplateError(f"video_url_template {template!r}: {error}") from None
    for name, spec, conversion in fields:
        if name is None:
            continue
        if name not in FIELDS or spec or conversion:
            raise VideoTemplateError(
                f"video_url_template {template!r}: {{{name}}} is not one of " + ", ".join(f"{{{f}}}" for f in FIELDS)
            )
    return template


def video_link(template: str, *, table: str, round_id: str, video_tc: str = "", video_ref: str = "") -> str | None:
    """The link to that moment (None when the table names no recorder)."""
    if not template:
        return None
    values = {"table": table, "round": round_id, "video_tc": video_tc, "video_ref": video_ref}
    return template.format_map({name: quote(value, safe="") for name, value in values.items()})
