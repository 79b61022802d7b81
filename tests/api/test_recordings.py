"""The table camera's recordings through the API, to operators only: the moment of a card (a playlist, a position
from a little before it, the clip's reference for a correction), the playlist and segments as ``studio record``
wrote them, and clear refusals (no recording of that moment, no recordings kept, another role, a moment without a
zone). The recording is made by the recorder's own writer (``services.recorder.writer``) at the test clock's time."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from services.recorder.writer import HlsWriter, RecorderConfig
from tests.api.conftest import Studio

FPS, SIZE = 10, (320, 180)


def record(folder: Path, start: datetime, seconds: float) -> None:
    """``seconds`` of a table camera from ``start`` (1 s segments, small frames: quick to encode)."""
    first = start.timestamp()
    writer = HlsWriter(RecorderConfig(folder, fps=FPS, size=SIZE, segment_s=1.0), now=lambda: first + seconds)
    for index in range(round(seconds * FPS)):
        image = np.full((SIZE[1], SIZE[0], 3), (index * 7) % 256, np.uint8)
        writer.add(image, first + index / FPS)
    writer.close()


def streamed(studio: Studio, url: str) -> None:
    """Table t1's video stream is ``url`` (its settings whole: a change replaces them; the house commission kept)."""
    settings = {"stream_url": url, "commission_bps": 500}
    changed = studio.client.patch("/v1/operator/tables/t1", json={"settings": settings}, headers=studio.auth("op"))
    assert changed.status_code == 200, changed.text


def recorded(studio: Studio, tmp_path: Path, seconds: float = 6) -> datetime:
    """t1's camera recorded from 3 s before the clock's now, for ``seconds``; the API keeps ``tmp_path``."""
    start = studio.clock.now() - timedelta(seconds=3)
    record(tmp_path / "t1", start, seconds)
    studio.app.state.recordings = tmp_path
    return start


def test_an_operator_finds_a_cards_moment_and_plays_the_recording_from_just_before_it(
    studio: Studio, tmp_path: Path
) -> None:
    start = recorded(studio, tmp_path)
    at = start + timedelta(seconds=3.5)
    answer = studio.client.get(
        "/v1/operator/tables/t1/recording", params={"at": at.isoformat()}, headers=studio.auth("op")
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["playlist"].startswith("/v1/operator/tables/t1/recording/clip.m3u8?at=")
    assert abs(found["position_s"] - 1.5) < 0.15  # two seconds before the card: 1.5 s into the recording
    assert found["segment"] == "seg-00000001.ts" and found["clip"] == f"recording:t1@{at.isoformat()}"
    assert len(found["timecode"]) == 11 and found["timecode"].count(":") == 3

    clip = studio.client.get(found["playlist"], headers=studio.auth("op"))  # the moment's clip: closed, loaded once
    assert clip.status_code == 200 and clip.headers["content-type"].startswith("application/vnd.apple.mpegurl")
    assert "#EXT-X-PLAYLIST-TYPE:VOD" in clip.text and clip.text.endswith("#EXT-X-ENDLIST\n")
    assert [line for line in clip.text.splitlines() if line.startswith("seg-")] == [f"seg-{n:08d}.ts" for n in range(6)]
    playlist = studio.client.get("/v1/operator/tables/t1/recording/index.m3u8", headers=studio.auth("op"))
    assert playlist.status_code == 200 and playlist.headers["content-type"] == "application/vnd.apple.mpegurl"
    assert playlist.text.startswith("#EXTM3U") and "#EXT-X-PROGRAM-DATE-TIME:" in playlist.text
    segment = studio.client.get("/v1/operator/tables/t1/recording/seg-00000001.ts", headers=studio.auth("op"))
    assert segment.status_code == 200 and segment.headers["content-type"] == "video/mp2t"
    assert segment.content[:1] == b"\x47" and len(segment.content) % 188 == 0  # MPEG-TS packets


def test_the_recording_is_refused_clearly_outside_it_without_it_and_to_anyone_but_an_operator(
    studio: Studio, tmp_path: Path
) -> None:
    moment = {"at": studio.clock.now().isoformat()}
    none = studio.client.get("/v1/operator/tables/t1/recording", params=moment, headers=studio.auth("op"))
    assert (none.status_code, none.json()["reason"]) == (404, "no_recordings")
    start = recorded(studio, tmp_path)
    for who in ("ana", "dealer"):
        assert (
            studio.client.get("/v1/operator/tables/t1/recording", params=moment, headers=studio.auth(who)).status_code
            == 403
        )
        assert (
            studio.client.get("/v1/operator/tables/t1/recording/index.m3u8", headers=studio.auth(who)).status_code
            == 403
        )
        clip = studio.client.get("/v1/operator/tables/t1/recording/clip.m3u8", params=moment, headers=studio.auth(who))
        assert clip.status_code == 403
    before = {"at": (start - timedelta(minutes=5)).isoformat()}
    outside = studio.client.get("/v1/operator/tables/t1/recording", params=before, headers=studio.auth("op"))
    assert (outside.status_code, outside.json()["reason"]) == (404, "not_recorded")
    assert "does not hold" in outside.json()["message"]
    naive = {"at": start.replace(tzinfo=None).isoformat()}
    zoneless = studio.client.get("/v1/operator/tables/t1/recording", params=naive, headers=studio.auth("op"))
    assert (zoneless.status_code, zoneless.json()["reason"]) == (422, "no_zone")
    for name in ("index.m3u8.part", "seg-1.ts", ".recorder.lock", "%2e%2e%2fstudio.db"):
        refused = studio.client.get(f"/v1/operator/tables/t1/recording/{name}", headers=studio.auth("op"))
        assert refused.status_code == 404, name
    other = studio.client.get("/v1/operator/tables/t2/recording", params=moment, headers=studio.auth("op"))
    assert (other.status_code, other.json()["reason"]) == (404, "not_recorded")


def test_a_table_id_with_dots_is_served_and_no_id_leads_out_of_the_folder(studio: Studio, tmp_path: Path) -> None:
    """Table ids take dots (``t.1``), as the API and ``studio record`` do; "." and ".." name no table; a moment at the
    calendar's edge is in no recording (not a server error)."""
    start = studio.clock.now() - timedelta(seconds=3)
    record(tmp_path / "t.1", start, 2)
    (tmp_path / "index.m3u8").write_text("#EXTM3U\n")  # a playlist right in the root: never reached by ".."
    studio.app.state.recordings = tmp_path
    at = {"at": (start + timedelta(seconds=1)).isoformat()}
    assert (
        studio.client.get("/v1/operator/tables/t.1/recording", params=at, headers=studio.auth("op")).status_code == 200
    )
    for table in ("..", "."):
        refused = studio.client.get(f"/v1/operator/tables/{table}/recording/index.m3u8", headers=studio.auth("op"))
        assert refused.status_code == 404, table
    edge = {"at": "0001-01-01T00:00:01+00:00"}
    assert (
        studio.client.get("/v1/operator/tables/t.1/recording", params=edge, headers=studio.auth("op")).status_code
        == 404
    )


def test_a_moments_clip_holds_a_minute_around_it_however_long_the_recording(studio: Studio, tmp_path: Path) -> None:
    """A long recording: the clip lists the 15 segments each side of the moment's, so a player loads a minute, not
    the day; the position counts from the clip's own start."""
    start = recorded(studio, tmp_path, seconds=40)
    at = start + timedelta(seconds=25.5)  # played from 23.5 s: segment 23, 0.5 s into it
    found = studio.client.get(
        "/v1/operator/tables/t1/recording", params={"at": at.isoformat()}, headers=studio.auth("op")
    )
    assert found.status_code == 200, found.text
    clip = studio.client.get(found.json()["playlist"], headers=studio.auth("op")).text
    listed = [line for line in clip.splitlines() if line.startswith("seg-")]
    assert listed == [f"seg-{n:08d}.ts" for n in range(8, 39)]  # 23 ± 15 (the last one held: 39)
    assert abs(found.json()["position_s"] - 15.5) < 0.15
