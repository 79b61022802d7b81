"""Every page in Vietnamese and Thai (Debian's Chromium, headless): ``?lang=vi|th`` puts a page in that language, the
overlay otherwise speaks its table's language, a Vietnamese or Thai browser gets its own, an unknown ``?lang=`` is
English. A page in Vietnamese or Thai shows none of the dictionary's English. The API serves the pages under uvicorn
on a real database; the test deals a known round through the API. Skipped where Chromium is not installed, unless
``STUDIO_REQUIRE_BROWSER`` is set (as in CI)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import httpx
import pytest

from tests.api.conftest import Studio, studio  # noqa: F401 (the fixture)
from tests.api.test_api import card, open_round
from tests.api.test_i18n import PLACEHOLDER, dictionary
from tests.browser.test_api_docs_in_chromium import offline_page
from tests.browser.test_ops_page_in_chromium import served  # noqa: F401 (the fixture)
from tests.browser.test_overlay_in_chromium import DEAL
from tests.browser.test_pages_in_chromium import browser  # noqa: F401 (the fixture)

# Each text the page shows a person: the title, text outside scripts (hidden parts too), placeholders, tooltips.
SHOWN = """() => {
  const texts = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.closest("script, style")) texts.push(node.data);
  }
  for (const node of document.querySelectorAll("[placeholder], [title], [aria-label]")) {
    texts.push(...["placeholder", "title", "aria-label"].map((name) => node.getAttribute(name) || ""));
  }
  return texts.join("\\n");
}"""
# The hands of DEAL (see the overlay's test) and the banners, in each language.
NAMES = {
    "vi": {"A": "Pok 9 · 2 deng", "B": "Sám cô · 5 deng", "C": "Ba lá hình · 3 deng",
           "banker": "Thùng phá sảnh · 5 deng"},
    "th": {"A": "ป๊อก 9 · 2 เด้ง", "B": "ตอง · 5 เด้ง", "C": "เซียน · 3 เด้ง", "banker": "สเตรทฟลัช · 5 เด้ง"},
}  # fmt: skip
BANNERS = {
    "vi": {"A": "Cửa A thắng · 2 deng", "B": "Cửa B thắng · 5 deng", "C": "Nhà cái thắng cửa C · 5 deng"},
    "th": {"A": "ขา A ชนะ · 2 เด้ง", "B": "ขา B ชนะ · 5 เด้ง", "C": "เจ้ามือชนะขา C · 5 เด้ง"},
}


@cache
def english(lang: str) -> tuple[re.Pattern[str], ...]:
    """The dictionary's English that a page in ``lang`` never shows: each piece of text between placeholders, with
    three letters or more, that no text of ``lang`` contains (so "Pok" and "deng" stay allowed in Vietnamese)."""
    words = dictionary()
    theirs = "\n".join(entry[lang] for entry in words.values())
    pieces = {
        piece.strip(" ·:;—–,.()#+…")
        for entry in words.values()
        for piece in PLACEHOLDER.split(entry["en"])[::2]  # the text between placeholders
    }
    kept = sorted(p for p in pieces if len(re.findall("[A-Za-z]", p)) >= 3 and p not in theirs)
    return tuple(re.compile(r"(?<![A-Za-z])" + re.escape(p) + r"(?![A-Za-z])") for p in kept)


def in_language(page: Any, lang: str, *expected: str) -> str:
    """The page's text, once it is in ``lang``: it shows ``expected`` and none of the dictionary's English."""
    page.wait_for_function(
        "(lang) => document.documentElement.lang === lang && !('i18nLoading' in document.documentElement.dataset)",
        arg=lang,
    )
    for text in expected:
        page.wait_for_function(f"(text) => ({SHOWN})().includes(text)", arg=text, timeout=10_000)
    shown: str = page.evaluate(SHOWN)
    leaks = [pattern.pattern for pattern in english(lang) if pattern.search(shown)]
    assert not leaks, (lang, page.url, leaks)
    return shown


def opened(browser: Any, url: str, locale: str = "en-US") -> Any:  # noqa: F811
    page = browser.new_context(locale=locale).new_page()
    page.goto(url)
    return page


def test_the_overlay_speaks_its_tables_language_unless_the_url_names_one(
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
    browser: Any,  # noqa: F811
) -> None:
    round_id = open_round(studio)
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    for code in DEAL:
        card(studio, round_id, code)
    changed = studio.client.patch("/v1/operator/tables/t1", json={"language": "th"}, headers=studio.auth("op"))
    assert changed.status_code == 200 and changed.json()["display"]["language"] == "th"

    pages = {
        "th": opened(browser, f"{served}/overlay/t1"),  # the table's language
        "vi": opened(browser, f"{served}/overlay/t1?lang=vi&delay_ms=0"),  # the URL's wins
        "en": opened(browser, f"{served}/overlay/t1?lang=xx", "vi-VN"),  # an unknown one: the table's
    }
    for lang, page in pages.items():
        page.wait_for_function("document.body.dataset.phase === 'settled' && document.querySelector('.banner')")
        if lang == "en":
            assert page.evaluate("document.documentElement.lang") == "th"
            continue
        in_language(page, lang)
        names = page.evaluate(
            "Object.fromEntries([...document.querySelectorAll('.hand')].map("
            "(h) => [h.dataset.position, h.querySelector('.points').dataset.name]))"
        )
        assert names == NAMES[lang]
        banners = page.evaluate(
            "Object.fromEntries([...document.querySelectorAll('.banner')].map((b) => [b.dataset.seat, b.textContent]))"
        )
        assert banners == BANNERS[lang]
        assert page.text_content("#phase") == {"vi": "Kết quả", "th": "ผลลัพธ์"}[lang]
        assert page.text_content(".hand[data-position='banker'] .name") == {"vi": "Nhà cái", "th": "เจ้ามือ"}[lang]


def test_the_staff_pages_in_vietnamese_and_thai(
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
    browser: Any,  # noqa: F811
) -> None:
    # the table list: ?lang=, else the browser's language, else English; its links keep the language asked for
    index = opened(browser, f"{served}/?lang=vi")
    in_language(index, "vi", "Các bàn của studio", "bảng điều khiển người chia bài")
    assert index.get_attribute("a[href^='/console/']", "href") == "/console/t1?lang=vi"
    assert index.get_attribute("a[href^='/overlay/']", "href") == "/overlay/t1"  # the overlay: its table's language
    in_language(opened(browser, f"{served}/", "th-TH"), "th", "โต๊ะของสตูดิโอ", "หน้าจอดีลเลอร์")
    english = opened(browser, f"{served}/?lang=fr", "en-GB")
    english.wait_for_selector("a[href='/console/t1']")
    assert english.evaluate("document.documentElement.lang") == "en"
    assert "Studio tables" in english.inner_text("h1")

    # the dealer console's sign-in, in Thai
    console = opened(browser, f"{served}/console/t1?lang=th")
    console.wait_for_selector("#login:not([hidden])")
    in_language(console, "th", "โทเคนของดีลเลอร์หรือผู้ควบคุม", "เปิดหน้าจอ")
    assert console.title() == "หน้าจอดีลเลอร์"

    # the operator's page: its sign-in, then signed in, its headings, tables and rounds, in Vietnamese
    round_id = open_round(studio)
    ops = opened(browser, f"{served}/ops?lang=vi")
    ops.wait_for_selector("#login:not([hidden])")
    in_language(ops, "vi", "Mã nhân viên vận hành", "Đăng nhập")
    ops.fill("#token", "not-a-token")
    ops.click("#login button[type=submit]")
    ops.wait_for_selector("#login-error:not(:empty)")  # the server's own words
    ops.fill("#token", studio.tokens["op"])
    ops.click("#login button[type=submit]")
    ops.wait_for_selector(f"#rounds tr[data-round='{round_id}']")
    in_language(ops, "vi", "đã đăng nhập: op", "Chờ nhân viên vận hành thứ hai", "Các ván", "đang mở")
    ops.evaluate("(id) => { location.hash = 'round=' + id; }", round_id)
    ops.wait_for_function("(id) => document.body.dataset.round === id", arg=round_id)
    shown = in_language(ops, "vi", "Hủy ván (hoàn lại tiền cược)", "Nhật ký hộp chia bài")
    assert " ".join(ops.inner_text("#detail h2").split()) == f"Ván {round_id} đang mở"
    assert "bàn t1 · ván 1" in shown
    assert ops.text_content("#filter-state option[value='settled']") == "đã thanh toán"


def test_the_players_pages_in_thai_and_vietnamese(
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
    browser: Any,  # noqa: F811 (after the API: the browser closes first, so no page keeps its streams open)
) -> None:
    # a round opened by the served API, on its clock: betting is open now
    opening = httpx.post(f"{served}/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("dealer"))
    assert opening.status_code == 201, opening.text
    round_id = opening.json()["round_id"]
    play = opened(browser, f"{served}/play/t1?lang=th")
    play.wait_for_selector("#login:not([hidden])")
    in_language(play, "th", "โทเคนผู้เล่นของคุณ", "เข้าร่วมโต๊ะ")
    play.fill("#token", studio.tokens["ana"])
    play.click("#login button[type=submit]")
    play.wait_for_function(f"document.body.dataset.round === '{round_id}'")
    shown = in_language(play, "th", "วางเดิมพัน", "ยอดเงิน", "ขา A", "เจ้ามือ ปะทะ ขา B", "รอบล่าสุดของคุณ")
    play.wait_for_function("document.querySelector('#balance').innerText.includes('฿')")  # THB as Thai writes it
    play.click(".spot[data-side='player'][data-seat='A']")
    play.click("#place")
    play.wait_for_selector("#message[data-code=placed]")
    assert play.inner_text("#message").startswith("วางเดิมพันแล้ว: ขา A ฿")
    assert "Place bets" not in shown

    # a room's page on a Pok Deng table: not a room, in Vietnamese; a Mậu Binh room: seats to sit at
    room = opened(browser, f"{served}/room/t1?lang=vi")
    room.wait_for_selector("#message[data-code=not_found]", state="attached")
    in_language(room, "vi", "Đây không phải phòng")
    created = studio.client.post(
        "/v1/operator/tables", json={"id": "m1", "game": "maubinh", "language": "vi"}, headers=studio.auth("op")
    )
    assert created.status_code == 201, created.text
    assert studio.client.post("/v1/operator/tables/m1/rounds", json={}, headers=studio.auth("op")).status_code == 201
    room = opened(browser, f"{served}/room/m1", "vi-VN")  # the browser's language
    room.fill("#token", studio.tokens["binh"])
    room.click("#login button[type=submit]")
    room.wait_for_function("document.body.dataset.phase === 'seating'")
    in_language(room, "vi", "Mậu Binh · m1", "Mời vào chỗ", "Ghế 1", "Ngồi đây", "Số dư")


@pytest.mark.db
def test_counts_of_one_read_in_the_singular_in_english_only(browser: Any, served: str) -> None:  # noqa: F811
    """The pages' plural rule (``I18N.t`` picks ``key_one`` when the language says the count is one)."""
    said = {}
    for lang in ("en", "vi"):
        page, elsewhere = offline_page(browser, served)
        page.goto(f"{served}/?lang={lang}")
        page.wait_for_function("typeof I18N !== 'undefined'")
        said[lang] = page.evaluate(
            """() => I18N.ready.then(() => [
                I18N.t("pokdeng.points", {points: 1}), I18N.t("pokdeng.points", {points: 0}),
                I18N.t("tienlen.cards_left", {n: 1}), I18N.t("tienlen.cards_left", {n: 13}),
                I18N.t("room.units", {units: -1, money: "THB 10"}), I18N.t("coup.ties", {n: 2}),
                I18N.t("room.units", {units: "+1", money: "THB 10"})])"""
        )
        assert elsewhere == []
    assert said["en"] == ["1 point", "0 points", "1 card", "13 cards", "-1 unit (THB 10)", "2 ties", "+1 unit (THB 10)"]
    assert said["vi"] == ["1 điểm", "0 điểm", "1 lá", "13 lá", "-1 đơn vị (THB 10)", "2 ván hòa", "+1 đơn vị (THB 10)"]


@pytest.mark.db
def test_every_page_switches_language_and_keeps_the_choice_with_its_own_fonts(
    studio: Studio,  # noqa: F811
    served: str,  # noqa: F811
    browser: Any,  # noqa: F811
) -> None:
    """Each page but the overlay shows the three languages, each in itself; choosing Thai shows the page again in Thai
    (URL and this browser keep it: the next page opens in Thai), drawn with the bundled Noto Sans Thai — no request
    leaves the studio. The overlay keeps its table's language and has no switch."""
    page, elsewhere = offline_page(browser, served)
    page.goto(f"{served}/play/t1")
    page.wait_for_selector("header nav.languages button[data-lang='th']")
    assert page.eval_on_selector_all("nav.languages button", "bs => bs.map((b) => b.textContent)") == [
        "English", "Tiếng Việt", "ไทย",
    ]  # fmt: skip
    assert page.get_attribute("nav.languages button[data-lang='en']", "aria-pressed") == "true"
    page.click("nav.languages button[data-lang='th']")
    page.wait_for_url("**/play/t1?lang=th")
    in_language(page, "th", "โทเคนผู้เล่นของคุณ")
    assert page.get_attribute("nav.languages button[data-lang='th']", "aria-pressed") == "true"
    faces = page.evaluate(
        """() => document.fonts.ready.then(() => [...document.fonts]
             .filter((face) => face.status === 'loaded').map((face) => face.family.replaceAll('"', '')))"""
    )
    assert "Noto Sans Thai" in faces and "Noto Sans" in faces, faces

    for path in ("/", "/ops", "/console/t1", "/room/t1", "/coup/t1"):  # the choice is kept: each opens in Thai
        page.goto(f"{served}{path}")
        page.wait_for_function("document.documentElement.lang === 'th' && document.querySelector('nav.languages')")
        pressed = page.eval_on_selector_all("nav.languages button[aria-pressed='true']", "bs => bs.map((b) => b.lang)")
        assert pressed == ["th"], path
    page.goto(f"{served}/ops")
    page.click("nav.languages button[data-lang='vi']")
    page.wait_for_url("**/ops?lang=vi")
    in_language(page, "vi", "Mã nhân viên vận hành")

    page.goto(f"{served}/overlay/t1")  # the table's language (English), not the browser's choice; no switch
    page.wait_for_function("document.body.dataset.phase !== undefined && !document.documentElement.dataset.i18nLoading")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.query_selector("nav.languages") is None
    assert elsewhere == []
