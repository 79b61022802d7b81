"""Every link of README.md and docs/ stays in the repository and lands: on a file that is there, and on a heading of
it when it names one. A link that leaves the repository goes only to a public standard or a package's page (never a
registry's download)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
# Public standards and package pages a page may link to.
OUTSIDE = ("www.rfc-editor.org", "datatracker.ietf.org", "www.w3.org", "html.spec.whatwg.org", "pypi.org",
           "www.npmjs.com", "packages.debian.org", "mqtt.org", "docs.oasis-open.org")  # fmt: skip


def links(text: str) -> list[tuple[int, str]]:
    """The targets of the page's Markdown links and images, outside code, with their line numbers."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            prose = re.sub(r"`[^`]*`", "", line)
            found += [(number, match[1]) for match in LINK.finditer(prose)]
    return found


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them."""
    made = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            made.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return made


LINKS = [(page, line, target) for page in PAGES for line, target in links(page.read_text(encoding="utf-8"))]


def test_the_pages_link_to_each_other() -> None:
    assert len(LINKS) >= 50
    assert {page.name for page, _line, _target in LINKS} >= {"README.md", "operator.md", "integrator.md", "pages.md"}


@pytest.mark.parametrize(
    ("page", "line", "target"), LINKS, ids=[f"{p.relative_to(ROOT)}:{line}" for p, line, _t in LINKS]
)
def test_the_link_lands(page: Path, line: int, target: str) -> None:
    where = f"{page.relative_to(ROOT)} line {line}: {target}"
    parts = urlsplit(target)
    if parts.scheme:
        assert parts.scheme == "https" and parts.hostname in OUTSIDE, f"{where} leaves the repository"
        return
    path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    assert path.is_relative_to(ROOT), f"{where} leaves the repository"
    assert path.exists(), f"{where}: no such file"
    if parts.fragment:
        assert path.suffix == ".md" and unquote(parts.fragment) in anchors(path), f"{where}: no such heading"


def test_the_check_reads_links_and_headings_as_github_does(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# The operator's page (`/ops`)\n\n## `studio pokdeng rtp`: the return\n## Rooms: Mậu Binh\n")
    assert anchors(page) == {"the-operators-page-ops", "studio-pokdeng-rtp-the-return", "rooms-mậu-binh"}
    text = "see [a](a.md#x) and ![b](b.png) but not `[c](c.md)`\n```\n[d](d.md)\n```\n"
    assert links(text) == [(1, "a.md#x"), (1, "b.png")]
