"""The overlay matches the video: it holds every change back by the table's delay (or ``?delay_ms=``), names each
hand in the game's terms once it is known, and shows each seat's result as a banner. Debian's Chromium, headless;
the API serves the page under uvicorn on a real database, and the test deals a known round through the API."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.api.conftest import Studio, studio  # noqa: F401 (the fixture)
from tests.api.test_api import card, open_round
from tests.api.test_recordings import streamed
from tests.browser.test_ops_page_in_chromium import served  # noqa: F401 (the fixture)
from tests.browser.test_pages_in_chromium import LEGIBILITY, browser  # noqa: F401 (the fixture)
from tests.support import cdn

DELAY_MS = 1_500
# A 4H 5H: Pok 9, suited (2 deng). B 7C 7D draws 7S: tong. C JC JD draws QS: three face cards (J Q K would be a
# straight, which ranks above). The banker 2S 3S
# draws 4S: a straight flush. No one bets, so each seat decides by the table's threshold at once.
DEAL = "4H 7C JC 2S 5H 7D JD 3S 7S QS 4S".split()
NAMES = {
    "A": "Pok 9 · 2 deng",
    "B": "Tong · 5 deng",
    "C": "Three face cards · 3 deng",
    "banker": "Straight flush · 5 deng",
}
BANNERS = {"A": "Seat A wins · 2 deng", "B": "Seat B wins · 5 deng", "C": "Banker beats C · 5 deng"}

# When each card first showed on the page (the browser's clock, ms since the epoch, as the test's time.time()).
RECORDER = """
window.firstSeen = {};
new MutationObserver(() => {
  for (const node of document.querySelectorAll(".card[data-card]")) {
    const code = node.dataset.card;
    if (code !== "hidden" && !(code in window.firstSeen)) window.firstSeen[code] = Date.now();
  }
}).observe(document, { subtree: true, childList: true, attributes: true });
"""


def overlay(browser: Any, url: str, query: str = "") -> Any:  # noqa: F811
    page = browser.new_page()
    page.add_init_script(RECORDER)
    page.goto(f"{url}/overlay/t1{query}")
    page.wait_for_function("document.body.dataset.delay !== undefined", timeout=15_000)
    return page


def test_the_overlay_holds_each_card_back_by_the_delay_and_names_the_hands_and_results(
    browser: Any,  # noqa: F811
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
) -> None:
    changed = studio.client.patch(
        "/v1/operator/tables/t1", json={"overlay_delay_ms": DELAY_MS}, headers=studio.auth("op")
    )
    assert changed.status_code == 200 and changed.json()["display"]["overlay_delay_ms"] == DELAY_MS
    delayed, live = overlay(browser, served), overlay(browser, served, "?delay_ms=0")
    assert delayed.evaluate("document.body.dataset.delay") == str(DELAY_MS)  # the table's setting
    round_id = open_round(studio)
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    dealt_at: dict[str, float] = {}
    for code in DEAL:
        card(studio, round_id, code)
        dealt_at[code] = time.time() * 1000
        time.sleep(0.3)
    assert studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()["phase"] == "settled"
    for page in (delayed, live):
        page.wait_for_function("document.body.dataset.phase === 'settled'", timeout=20_000)
    late = {code: at - dealt_at[code] for code, at in delayed.evaluate("window.firstSeen").items() if code in dealt_at}
    prompt = {code: at - dealt_at[code] for code, at in live.evaluate("window.firstSeen").items() if code in dealt_at}
    assert set(late) == set(prompt) == set(DEAL)
    for code in DEAL:  # the poll of the database adds up to a quarter of a second, the browser a little more
        assert DELAY_MS <= late[code] < DELAY_MS + 2_500, (code, late[code])
        assert prompt[code] < DELAY_MS, (code, prompt[code])
    for page in (delayed, live):
        names = page.evaluate(
            "Object.fromEntries([...document.querySelectorAll('.hand')].map("
            "(h) => [h.dataset.position, h.querySelector('.points').dataset.name]))"
        )
        assert names == NAMES
        banners = page.evaluate(
            "Object.fromEntries([...document.querySelectorAll('.banner')].map((b) => [b.dataset.seat, b.textContent]))"
        )
        assert banners == BANNERS


# How many pairs of an element of the first selector and one of the second overlap on the screen.
OVERLAPS = """([first, second]) => {
  const boxes = (selector) => [...document.querySelectorAll(selector)].map((e) => e.getBoundingClientRect());
  const cut = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  return boxes(first).flatMap((a) => boxes(second).filter((b) => cut(a, b))).length;
}"""


def test_the_overlay_reads_at_1080p_on_opaque_plates_in_either_layout(
    browser: Any,  # noqa: F811
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
) -> None:
    """At 1920×1080 every word is 28 px or more on an opaque plate (the video never shows through text), and
    ``?layout=corner`` keeps the whole overlay in the right part of the picture."""
    round_id = open_round(studio)
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in DEAL:
        card(studio, round_id, code)
    for layout in ("bar", "corner"):
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(f"{served}/overlay/t1?delay_ms=0&layout={layout}")
        page.wait_for_function(
            "document.body.dataset.phase === 'settled' && document.querySelectorAll('.banner').length"
        )
        page.wait_for_timeout(700)  # the banners' arrival has played
        assert page.evaluate("document.body.dataset.layout") == layout
        texts = page.evaluate(LEGIBILITY)
        assert len(texts) >= 12, texts  # the phase, four hands' names and points, three banners
        small = [(t["text"], t["px"]) for t in texts if t["px"] < 28]
        assert not small, (layout, small)
        see_through = [(t["text"], t["alpha"]) for t in texts if t["alpha"] < 1]
        assert not see_through, (layout, see_through)
        assert all(t["bottom"] <= 1080 and t["right"] <= 1920 for t in texts), layout  # nothing off the picture
        overlaps = page.evaluate(OVERLAPS, [".banner", ".bar .hand, .phase"])
        assert overlaps == 0, layout  # a banner never covers a hand
        if layout == "corner":
            assert min(t["left"] for t in texts) >= 1920 * 0.45, [(t["text"], t["left"]) for t in texts]
        page.close()


def test_the_overlay_follows_an_hls_streams_own_time_when_the_table_has_one(
    browser: Any,  # noqa: F811
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A table whose stream is HLS with dated segments: the overlay holds the data back by a viewer's lag (the live
    edge's age plus three target durations), read from the playlist again as it grows; ?delay_ms= still wins."""
    edge_age_s, target_s = 1.5, 2

    def write_playlist() -> None:
        end = datetime.now(UTC) - timedelta(seconds=edge_age_s)
        lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{target_s}", "#EXT-X-MEDIA-SEQUENCE:7"]
        for n in range(3):
            start = end - timedelta(seconds=target_s * (3 - n))
            lines += [f"#EXT-X-PROGRAM-DATE-TIME:{start.isoformat(timespec='milliseconds').replace('+00:00', 'Z')}",
                      f"#EXTINF:{target_s:.3f},", f"seg-{7 + n:08d}.ts"]  # fmt: skip
        (tmp_path / "index.m3u8").write_text("\n".join(lines) + "\n")

    write_playlist()
    written = time.time()
    with cdn(tmp_path) as url:
        streamed(studio, f"{url}/index.m3u8")
        followed, fixed = overlay(browser, served), overlay(browser, served, "?delay_ms=250")
        assert followed.evaluate("document.body.dataset.delaySource") == "stream"
        read_by = time.time()
        expected = (edge_age_s + 3 * target_s) * 1000  # when written; the playlist ages until the overlay reads it
        lag = int(followed.evaluate("document.body.dataset.delay"))
        assert expected - 300 <= lag <= expected + (read_by - written) * 1000 + 300, lag
        assert (fixed.evaluate("document.body.dataset.delaySource"), fixed.evaluate("document.body.dataset.delay")) == (
            "url", "250",
        )  # fmt: skip
        edge_age_s = 6.0  # the stream falls behind: the overlay follows at its next reading (every 4 s)
        write_playlist()
        followed.wait_for_function("Number(document.body.dataset.delay) >= 11_500", timeout=10_000)
