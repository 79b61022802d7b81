"""The table camera's recordings, for the operator's page: ``studio record`` writes each table's camera as HLS under
one folder (``ROOT/{table}/index.m3u8`` and its segments), and the API given that folder (``studio api --recordings
ROOT``) serves them to operators only (surveillance video: never public) and finds the moment of a card in them.

The playlist dates each segment (``#EXT-X-PROGRAM-DATE-TIME``), so a moment (a card's arrival) is a segment and an
offset into it; the operator's page plays the recording from there (hls.js, the token on every request) beside the
card's crop and raw bytes, and a correction proposed while watching carries the clip's reference.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, PlainTextResponse

from services.api.deps import CurrentOperator
from services.recorder.playlist import Playlist, RecorderError, Segment, locate, read_playlist, render_playlist
from services.rounds.errors import NotFoundError, RoundError

router = APIRouter(prefix="/v1/operator/tables", tags=["operator"])
TableId = Annotated[str, PathParam(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]  # a table id, as ``studio record`` takes
FILES = re.compile(r"index\.m3u8|seg-\d{8}\.ts")  # what ``studio record`` writes, and nothing else is served
PLAYLIST = "index.m3u8"
PRE_ROLL = timedelta(seconds=2)  # a moment plays from a little before it: the dealer's hand coming in
CLIP = 15  # segments each side of a moment's in the clip the operator's page plays (a minute at 2 s segments)
CLIP_NAME = "clip.m3u8"


def folder(request: Request, table_id: str) -> Path:
    root: Path | None = request.app.state.recordings
    if root is None:
        raise NotFoundError("this API serves no recordings (start it with --recordings DIR)", reason="no_recordings")
    if table_id.strip(".") == "":  # "." and "..": no table, and not a way out of the folder
        raise NotFoundError(f"no table {table_id!r}", reason="not_recorded")
    return root / table_id


def clip_of(request: Request, table_id: str, at: datetime) -> tuple[list[Segment], Segment, float]:
    """The segments around ``at`` (``CLIP`` of them each side), the one that holds it (from a little before) and the
    seconds into it; refusals naming why there are none."""
    if at.tzinfo is None:
        raise RoundError(f"at={at.isoformat()} names no time zone: give one (…Z or +07:00)", reason="no_zone")
    path = folder(request, table_id) / PLAYLIST
    if not path.is_file():
        raise NotFoundError(f"table {table_id} has no recording", reason="not_recorded")
    try:
        segments = read_playlist(path)
    except RecorderError as error:
        raise NotFoundError(f"table {table_id}'s recording cannot be read: {error}", reason="not_recorded") from None
    try:
        found = locate(segments, at - PRE_ROLL) or locate(segments, at)
    except OverflowError:  # a moment at the edge of the calendar: in no recording
        found = None
    if found is None:
        kept = f"{segments[0].start.isoformat()} – {segments[-1].start.isoformat()}" if segments else "nothing"
        raise NotFoundError(f"table {table_id}'s recording does not hold {at.isoformat()} (it holds {kept})",
                            reason="not_recorded")  # fmt: skip
    segment, offset = found
    index = segments.index(segment)
    return segments[max(0, index - CLIP) : index + CLIP + 1], segment, offset


@router.get("/{table_id}/recording", summary="Where a moment of the table's recording plays")
def moment(
    table_id: TableId, at: Annotated[datetime, Query()], _operator: CurrentOperator, request: Request
) -> dict[str, Any]:
    """The recording around ``at`` (ISO 8601 with its zone: a card's ``received_at``), from a little before it: the
    clip's playlist to load (a minute or so, closed: a player loads it once, however long the day's recording), the
    position in seconds from its start, and the clip's reference for a correction."""
    clip, segment, offset = clip_of(request, table_id, at)
    before = sum(each.duration for each in clip[: clip.index(segment)])
    return {
        "playlist": f"/v1/operator/tables/{table_id}/recording/{CLIP_NAME}?at={quote(at.isoformat())}",
        "position_s": round(before + offset, 3),
        "segment": segment.uri,
        "timecode": segment.timecode,
        "clip": f"recording:{table_id}@{at.isoformat()}",
    }


@router.get(
    f"/{{table_id}}/recording/{CLIP_NAME}",
    summary="The recording around a moment (HLS, closed)",
    response_class=PlainTextResponse,
)
def clip_playlist(
    table_id: TableId, at: Annotated[datetime, Query()], _operator: CurrentOperator, request: Request
) -> PlainTextResponse:
    """A playlist of the segments around ``at`` with ``#EXT-X-ENDLIST``: played as a video on demand."""
    clip, _segment, _offset = clip_of(request, table_id, at)
    text = render_playlist(Playlist(segments=tuple(clip))).replace(
        "#EXT-X-VERSION:3\n", "#EXT-X-VERSION:3\n#EXT-X-PLAYLIST-TYPE:VOD\n", 1
    )
    return PlainTextResponse(text + "#EXT-X-ENDLIST\n", media_type="application/vnd.apple.mpegurl",
                             headers={"Cache-Control": "private, max-age=60"})  # fmt: skip


@router.get("/{table_id}/recording/{name}", summary="A file of the recording (HLS)", response_class=FileResponse)
def recording_file(table_id: TableId, name: str, _operator: CurrentOperator, request: Request) -> FileResponse:
    """The playlist (``index.m3u8``) or one of its segments (``seg-NNNNNNNN.ts``), as ``studio record`` wrote them."""
    path = folder(request, table_id) / name
    if not FILES.fullmatch(name) or not path.is_file():
        raise NotFoundError(f"table {table_id}'s recording has no file {name!r}", reason="not_recorded")
    playlist = name == PLAYLIST
    return FileResponse(
        path,
        media_type="application/vnd.apple.mpegurl" if playlist else "video/mp2t",
        headers={"Cache-Control": "no-cache" if playlist else "private, max-age=86400"},
    )
