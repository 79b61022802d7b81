"""The pages' words (``services/api/pages/i18n.json``): every key in English, Vietnamese and Thai with the same
placeholders; every key the pages use exists and every key is used; the English in the HTML is the dictionary's; each
page loads i18n.js before its own scripts; Pok Deng's hands and Mậu Binh's chi carry the games' own terms."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest

import services
from services.api.errors import REFUSALS
from services.api.page_routes import PAGES
from services.catalog import STUDIO_GAMES
from services.games.baccarat.port import BACCARAT
from services.games.dragontiger.port import DRAGON_TIGER
from services.games.maubinh.ranking import Category
from services.games.roads import DERIVED
from services.rounds import staff
from services.rounds.players import ROLES
from services.rounds.proposals import STATUSES

LANGUAGES = ("en", "vi", "th")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# What the pages' code names a key by: a data-i18n* attribute (in HTML, or set from a script), a key as a string
# ("pokdeng.rank.2"), a family of keys completed at run time (t("outcome." + outcome), word("state", …)).
ATTRIBUTE = re.compile(r"""data-i18n(?!-slot)(?:-[a-z-]+)?"?\s*[=:]\s*"([^"]+)\"""")
LITERAL = re.compile(r'"([a-z]+(?:\.[a-z0-9_]+)+)"')
FAMILY = re.compile(r'"([a-z_]+(?:\.[a-z0-9_]+)*\.)"\s*\+')
WORD = re.compile(r'\bword\("([a-z_]+)"')
REASON = re.compile(r'\breason="(\w+)"(?: if [^\n]*? else "(\w*)")?')
ALERT = re.compile(r'\b_(?:verify_)?alert\(\s*"(\w+)"')
SERVICES = PAGES.parents[1]
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def dictionary() -> dict[str, dict[str, str]]:
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), f"duplicate keys: {sorted({k for k in keys if keys.count(k) > 1})}"
        return dict(pairs)

    words: dict[str, dict[str, str]] = json.loads((PAGES / "i18n.json").read_text("utf-8"), object_pairs_hook=unique)
    return words


def sources() -> dict[str, str]:
    """The pages and their scripts (not i18n.js: it is what reads the keys)."""
    return {
        path.name: path.read_text("utf-8")
        for path in sorted(PAGES.glob("*"))
        if path.suffix in (".html", ".js") and path.name != "i18n.js"
    }


def reasons() -> set[str]:
    """Every refusal reason the services name (``reason="does_not_beat"``, either side of a conditional): the pages
    say each in every language (``refusalText`` in studio.js), never the server's English."""
    found: set[str] = set()
    for path in SERVICES.rglob("*.py"):
        for match in REASON.finditer(path.read_text("utf-8")):
            found |= {name for name in match.groups() if name}
    return found


def alert_kinds() -> set[str]:
    """Every kind of alert the controller raises to the dealer console (``self._alert("deck_low", …)``)."""
    return {kind for path in SERVICES.rglob("*.py") for kind in ALERT.findall(path.read_text("utf-8"))}


def used() -> tuple[set[str], set[str]]:
    """The keys the pages name, and the prefixes of the families of keys they complete at run time."""
    words = dictionary()
    namespaces = {key.split(".")[0] for key in words}
    keys: set[str] = set()
    families: set[str] = set()
    for text in sources().values():
        keys |= set(ATTRIBUTE.findall(text))
        keys |= {key for key in LITERAL.findall(text) if key.split(".")[0] in namespaces}
        families |= set(FAMILY.findall(text)) | {group + "." for group in WORD.findall(text)}
    return keys, families


def test_every_key_has_english_vietnamese_and_thai_with_the_same_placeholders() -> None:
    words = dictionary()
    assert len(words) > 200
    for key, entry in words.items():
        assert re.fullmatch(r"[a-z]+(\.[a-z0-9_]+)+", key), key
        assert set(entry) == set(LANGUAGES), key
        for lang in LANGUAGES:
            assert isinstance(entry[lang], str) and entry[lang].strip() == entry[lang] != "", (key, lang)
        names = {lang: sorted(PLACEHOLDER.findall(entry[lang])) for lang in LANGUAGES}
        assert names["vi"] == names["en"] == names["th"], (key, names)
        assert "{" not in PLACEHOLDER.sub("", "".join(entry.values())), key  # no broken placeholder


def test_every_key_the_pages_use_exists_and_every_key_is_used() -> None:
    words = dictionary()
    keys, families = used()
    assert {"hand.seat", "console.token", "pokdeng.rank.2"} <= keys and {"outcome.", "state."} <= families
    missing = sorted(keys - set(words))
    assert not missing, f"keys the pages use that i18n.json lacks: {missing}"
    for family in families:
        assert any(key.startswith(family) for key in words), f"no key of the family {family}*"
    unused = sorted(
        key for key in words
        if key not in keys and not any(key.startswith(f) for f in families) and key.removesuffix("_one") not in keys
    )  # fmt: skip
    assert not unused, f"keys no page uses: {unused}"


def test_each_singular_sits_beside_its_plural_with_the_same_placeholders() -> None:
    """``key_one`` is the text ``t`` takes when the count is one (i18n.js); its plural must exist and agree."""
    words = dictionary()
    singulars = [key for key in words if key.endswith("_one")]
    assert len(singulars) >= 10
    for key in singulars:
        plural = words.get(key.removesuffix("_one"))
        assert plural is not None, key
        assert sorted(PLACEHOLDER.findall(words[key]["en"])) == sorted(PLACEHOLDER.findall(plural["en"])), key
        assert words[key]["en"] != plural["en"], key  # English says it differently, or it would not be needed


def top_level_names(text: str, start: int) -> set[str]:
    """The names of an object literal's entries (``{ seat, points: hand.points }``) that opens at ``start``."""
    names, depth, entry = set(), 0, ""
    for char in text[start:]:
        depth += (char in "{[(") - (char in "}])")
        if depth == 0 or (depth == 1 and char == ","):
            names.add(re.match(r"[\s{,]*(\w*)", entry).group(1))  # type: ignore[union-attr]
            entry = ""
            if depth == 0:
                return names - {""}
        else:
            entry += char
    raise AssertionError("unclosed object literal")


def test_each_call_fills_the_placeholders_of_its_text() -> None:
    words = dictionary()
    calls = 0
    for name, text in sources().items():
        for call in re.finditer(r'(?:\bt|I18N\.nodes)\("([a-z0-9_.]+)"\s*(\)|,\s*\{)', text):
            key, given = call.group(1), set() if call.group(2) == ")" else top_level_names(text, call.end() - 1)
            assert given == set(PLACEHOLDER.findall(words[key]["en"])), (name, key, given)
            calls += 1
    assert calls > 100


@pytest.mark.parametrize(
    ("family", "members"),
    [
        ("outcome.", {"seat", "banker", "tie"}),
        ("play.outcome.", {"seat", "banker", "tie"}),
        ("result.", {"seat", "banker", "tie"}),
        ("maubinh.hand.", {category.label for category in Category}),
        ("proposal.", set(STATUSES)),
        ("state.", {"open", "settled", "corrected", "void"}),
        ("check.", {"pending", "agreed", "mismatch", "unseen", "confirmed"}),
        ("side.", {"player", "banker", "seat"}),  # seat: a room's stake in the audit
        ("play.bet.", {"player", "banker"}),
        ("play.one_side.", {"player", "banker"}),
        ("play.decided.", {"draw", "stand"}),
        ("game.", set(STUDIO_GAMES.names())),
        ("coup.side.", {*BACCARAT.spots, *DRAGON_TIGER.spots, *BACCARAT.sides, *DRAGON_TIGER.sides}),
        ("coup.bead.", {*BACCARAT.sides, *DRAGON_TIGER.sides, "tie"}),
        ("coup.flag.", {*BACCARAT.mark_keys, *DRAGON_TIGER.mark_keys} - {"winner"}),
        ("coup.road.", {"bead_plate", "big_road", *DERIVED}),
        ("coup.colour.", {"red", "blue"}),
        ("status.", {"live", "offline", "error", "reconnecting"}),
        ("console.wait.", {"insurance", "betting", "settled", "void"}),
        ("room.phase.", {"seating", "dealing", "arranging", "showdown", "playing", "settled", "void"}),
        ("phase.", {"betting", "dealing", "insurance", "drawing", "settled", "void", "seating", "arranging",
                    "showdown", "playing"}),
        ("room.result.", {"won", "won_one", "paid", "paid_one"}),
        ("staff.", set(staff.ACTIONS)),
        ("role.", {*ROLES, "cli"}),
        ("refusal.reason.", reasons()),
        ("console.alert.", alert_kinds()),
    ],
)  # fmt: skip
def test_each_family_of_keys_the_pages_complete_has_every_member(family: str, members: set[str]) -> None:
    words = dictionary()
    assert {key[len(family) :] for key in words if key.startswith(family) and "." not in key[len(family) :]} == members
    assert family in used()[1]


class StaticText(HTMLParser):
    """Each element with data-i18n and its English text (a data-i18n-slot child as {name}), each translated
    attribute with its English value, and the <title> with <html>'s data-i18n-document-title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.frames: list[dict[str, Any]] = [{"tag": "", "key": None, "slot": None, "text": []}]
        self.texts: list[tuple[str, str]] = []
        self.attributes: list[tuple[str, str]] = []
        self.title_key = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "html":
            self.title_key = values.get("data-i18n-document-title", "")
        for name in ("placeholder", "title", "aria-label"):
            if f"data-i18n-{name}" in values:
                self.attributes.append((values[f"data-i18n-{name}"], values.get(name, "")))
        if tag not in VOID_TAGS:
            self.frames.append({"tag": tag, "key": values.get("data-i18n"), "slot": values.get("data-i18n-slot"),
                                "text": []})  # fmt: skip

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_TAGS:
            return
        frame = self.frames.pop()
        assert frame["tag"] == tag, (frame["tag"], tag)
        text = " ".join("".join(frame["text"]).split())
        if frame["key"]:
            self.texts.append((frame["key"], text))
        if tag == "title":
            self.texts.append((self.title_key, text))
        self.frames[-1]["text"].append("{" + frame["slot"] + "}" if frame["slot"] else text)

    def handle_data(self, data: str) -> None:
        self.frames[-1]["text"].append(data)


@pytest.mark.parametrize("page", sorted(path.name for path in PAGES.glob("*.html")))
def test_each_page_loads_the_words_first_and_its_english_is_the_dictionary(page: str) -> None:
    words = dictionary()
    html = (PAGES / page).read_text("utf-8")
    scripts = re.findall(r"<script( src=\"([^\"]+)\")?>", html)
    assert scripts[0][1] == "/static/i18n.js", page  # before studio.js and the page's own script
    parser = StaticText()
    parser.feed(html)
    assert parser.title_key, page
    for key, english in parser.texts + parser.attributes:
        assert words[key]["en"] == english, (page, key)


# Pok Deng is Thai: its hands in Thai, and as Vietnamese players name them (Pok and deng kept); Mậu Binh's chi and
# Tiến Lên's chops in Vietnamese (services/api/pages, docs/rules).
TERMS = {
    "th": {"pokdeng.rank.2": "ตอง", "pokdeng.rank.3": "สเตรทฟลัช", "pokdeng.rank.4": "เรียง", "pokdeng.rank.5": "เซียน",
           "pokdeng.pok": "ป๊อก {points}", "pokdeng.points": "{points} แต้ม", "pokdeng.deng": "{n} เด้ง"},
    "vi": {"pokdeng.rank.3": "Thùng phá sảnh", "pokdeng.rank.4": "Sảnh", "pokdeng.rank.5": "Ba lá hình",
           "pokdeng.pok": "Pok {points}", "pokdeng.points": "{points} điểm", "pokdeng.deng": "{n} deng",
           "maubinh.hand.straight_flush": "thùng phá sảnh", "maubinh.hand.four_of_a_kind": "tứ quý",
           "maubinh.hand.full_house": "cù lũ", "maubinh.hand.straight": "sảnh", "maubinh.hand.two_pair": "thú",
           "maubinh.hand.pair": "đôi", "maubinh.hand.high_card": "mậu thầu", "hand.banker": "Nhà cái"},
}  # fmt: skip


@pytest.mark.parametrize("lang", sorted(TERMS))
def test_the_games_are_named_in_their_own_terms(lang: str) -> None:
    words = dictionary()
    assert {key: words[key][lang] for key in TERMS[lang]} == TERMS[lang]
    if lang == "vi":
        assert "binh lủng" in words["maubinh.arrange_hint"]["vi"] and "chặt" in words["tienlen.chop"]["vi"]


def refusal_codes() -> dict[str, str]:
    """The code of every refusal the API answers with (each class under ``REFUSALS``), and a class that has it."""
    for module in pkgutil.walk_packages(services.__path__, "services."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)  # every refusal class defined

    def below(kind: type[Exception]) -> Iterator[type[Exception]]:
        yield kind
        for sub in kind.__subclasses__():
            yield from below(sub)

    return {str(getattr(kind, "code", "")): kind.__qualname__ for root in REFUSALS for kind in below(root)}


def test_every_refusal_the_api_answers_has_words_in_every_language() -> None:
    """A page says any refusal it meets in its reader's language (``refusalText``: the reason's words, else the
    code's), never the server's English: every code has its sentence (the languages: the test above)."""
    words = dictionary()
    codes = refusal_codes()
    assert len(codes) >= 40 and {"rule_violation", "insufficient_funds", "flow_changed"} <= set(codes)
    missing = {code: kind for code, kind in codes.items() if f"refusal.{code}" not in words}
    assert not missing, missing
