"""The table camera's recording in a real browser (Debian's Chromium, hls.js): the operator's page plays it at a
card's moment of the shoe journal, with the operator's token on every request, and fills the correction's video
reference with the clip; the player's page plays a table's HLS stream from a CDN. The recordings are made by the
recorder's own writer. Skipped where Chromium is not installed, unless ``STUDIO_REQUIRE_BROWSER`` is set (as in CI)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from services.api.app import create_app
from tests.api.conftest import Studio, studio  # noqa: F401 (the fixture)
from tests.api.test_four_eyes import settled_round
from tests.api.test_recordings import SIZE, record, streamed
from tests.browser.test_ops_page_in_chromium import served, serving, shown, signed_in  # noqa: F401 (the fixture)
from tests.browser.test_pages_in_chromium import browser  # noqa: F401 (the fixture)
from tests.support import cdn

PLAYING = "(v) => v.readyState >= 2 && v.videoWidth > 0"


@pytest.fixture
def recording_api(database: Engine, tmp_path: Path) -> Iterator[str]:
    """The API under uvicorn keeping its tables' recordings in ``tmp_path/recordings``."""
    yield from serving(create_app(database, recordings=tmp_path / "recordings"))


def test_an_operator_plays_the_table_camera_at_a_card_of_the_shoe_journal(
    studio: Studio,  # noqa: F811
    recording_api: str,
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    round_id = settled_round(studio)  # its cards arrived at the test clock's now
    record(tmp_path / "recordings" / "t1", studio.clock.now() - timedelta(seconds=3), 6)
    op = signed_in(browser, recording_api, studio.tokens["op"])
    asked: list[str] = []
    op.on(
        "request",
        lambda request: (
            asked.append(request.headers.get("authorization", "")) if "/recording/" in request.url else None
        ),
    )
    shown(op, round_id)
    op.click("#d-cards button.moment >> nth=0")
    video = op.wait_for_selector("#d-player:not([hidden]) #recording")
    op.wait_for_function(PLAYING, arg=video, timeout=20_000)
    assert op.evaluate("(v) => [v.videoWidth, v.videoHeight]", video) == list(SIZE)
    position = float(op.evaluate("(v) => v.dataset.position", video))
    assert abs(position - 1.0) < 0.15  # two seconds before the card, 3 s into the recording
    assert abs(op.evaluate("(v) => v.currentTime", video) - position) < 1.0  # it plays from there
    assert asked and all(header == f"Bearer {studio.tokens['op']}" for header in asked)  # the token on each request
    assert op.input_value("#video-ref").startswith("recording:t1@")  # the correction's video reference
    assert "The table camera at" in op.inner_text("#recording-at")
    other = settled_round(studio, keys="g")  # another round shown: no clip of this one stays, no video plays
    shown(op, other)
    assert op.input_value("#video-ref") == "" and op.is_hidden("#d-player")


def test_the_players_page_plays_the_tables_hls_stream(
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    record(tmp_path, studio.clock.now(), 4)  # a stream as a CDN holds it: index.m3u8 and its segments
    with cdn(tmp_path) as url:
        streamed(studio, f"{url}/index.m3u8")
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{served}/play/t1")
        page.fill("#token", studio.tokens["ana"])
        page.click("#login button[type=submit]")
        video = page.wait_for_selector("#video:not([hidden])")
        page.wait_for_function(PLAYING, arg=video, timeout=20_000)
        assert page.evaluate("(v) => [v.videoWidth, v.videoHeight]", video) == list(SIZE)
        assert page.is_hidden("#placeholder")
        assert page.evaluate("typeof Hls") == "function"  # played through hls.js, served with the pages
