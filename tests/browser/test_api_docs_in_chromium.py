"""The API reference pages (``/docs``, ``/redoc``) in a real browser with the internet cut off.

Every request to another host is recorded and refused, as on a studio network without the internet: both pages
must still draw the whole API from the server alone. Skipped where Chromium is not installed, unless
``STUDIO_REQUIRE_BROWSER`` is set (as in CI).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.browser.test_ops_page_in_chromium import served  # noqa: F401 (the fixture)
from tests.browser.test_pages_in_chromium import browser  # noqa: F401 (the fixture)


def offline_page(browser: Any, base: str) -> tuple[Any, list[str]]:  # noqa: F811
    """A page that may reach ``base`` only; what it tried elsewhere is in the list."""
    elsewhere: list[str] = []
    own = urlsplit(base).netloc
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(route: Any) -> None:
        if urlsplit(route.request.url).netloc == own or route.request.url.startswith("data:"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    return context.new_page(), elsewhere


@pytest.mark.db
def test_swagger_ui_draws_every_operation_without_the_internet(browser: Any, served: str) -> None:  # noqa: F811
    page, elsewhere = offline_page(browser, served)
    page.goto(f"{served}/docs")
    page.wait_for_selector(".opblock", timeout=20_000)
    operations = page.locator(".opblock").count()
    paths = len(page.request.get(f"{served}/openapi.json").json()["paths"])
    assert operations >= paths >= 20
    assert "studio" in page.title()
    assert elsewhere == []


@pytest.mark.db
def test_redoc_draws_the_api_without_the_internet(browser: Any, served: str) -> None:  # noqa: F811
    page, elsewhere = offline_page(browser, served)
    page.goto(f"{served}/redoc")
    page.wait_for_selector("[role=menuitem], .menu-content li", timeout=20_000)
    page.wait_for_function("document.body.innerText.includes('Round State')", timeout=20_000)
    assert elsewhere == []
