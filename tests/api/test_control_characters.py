"""A NUL in a path or a query, or a value the database cannot store, is refused with a clear 422, never a 500.

PostgreSQL cannot compare or store a text holding a NUL; before this, ``GET /v1/operator/rounds/a%00b`` raised a
``DataError`` out of the app. The fuzz test can meet it only by chance; this asks on purpose, on both databases.
"""

from __future__ import annotations

import pytest
from sqlalchemy.exc import DataError

from tests.api.conftest import Studio

PATHS = [
    "/v1/rounds/a%00b",
    "/v1/tables/a%00b/current",
    "/v1/history/a%00b",
    "/v1/operator/rounds/a%00b",
    "/v1/operator/proposals/a%00b",
    "/v1/rounds/r1%00/yours",
    "/v1/history?table=a%00b",
]


@pytest.mark.db
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("who", ["op", "ana"])
def test_a_nul_in_a_path_or_query_is_refused_by_name(studio: Studio, who: str, path: str) -> None:
    response = studio.client.get(path, headers=studio.auth(who))
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "invalid_request"
    assert "NUL character" in body["message"] and ("path" in body["message"] or "query" in body["message"])


@pytest.mark.db
def test_a_value_the_database_cannot_store_is_refused_as_bad_input(
    studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever route meets it (a text column given a NUL, a number past its column), the answer is a 422 that
    says so, not a server error; the route's transaction has rolled back by then."""
    driver = Exception("PostgreSQL text fields cannot contain NUL (0x00) bytes")

    def unstorable(*_args: object) -> None:
        raise DataError("INSERT INTO transfers …", {}, driver)

    monkeypatch.setattr(studio.services.wallets, "deposit", unstorable)
    response = studio.post("op", "/v1/operator/players/ana/deposit", {"amount": 100}, key="d1")
    assert response.status_code == 422, response.text  # type: ignore[attr-defined]
    assert response.json() == {  # type: ignore[attr-defined]
        "code": "invalid_request",
        "message": "a value of the request cannot be stored (a text holding a NUL character, or a number out of range)",
    }
