"""The API reference pages name no other host: every script, style and icon they load is served here."""

from __future__ import annotations

import re

import pytest

from tests.api.conftest import Studio


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_reference_pages_load_only_what_the_server_serves(studio: Studio, page: str) -> None:
    html = studio.client.get(page)
    assert html.status_code == 200 and "text/html" in html.headers["content-type"]
    assert re.findall(r"https?://", html.text) == []  # no CDN, no web fonts, no favicon from elsewhere
    loaded = re.findall(r"""(?:src|href|spec-url)=["']([^"']+)["']|url: ['"]([^'"]+)['"]""", html.text)
    urls = {url for pair in loaded for url in pair if url}
    assert "/openapi.json" in urls and len(urls) >= 3, urls
    for url in urls:
        response = studio.client.get(url)
        assert response.status_code == 200, url
        assert len(response.content) > 1_000, url  # the whole asset, not a stub
