"""Refusals that used to be 500s or silent: out-of-range settings, a database that is down, huge bodies,
money sent to accounts that hold no wallet."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from services.api.app import create_app
from services.api.limits import MAX_BODY_BYTES
from services.db import make_engine
from tests.api.conftest import Studio


@pytest.mark.parametrize(
    "settings",
    [{"hold_multiple": 10**30}, {"betting_window_ms": 10**20}, {"max_stake": 10**16}, {"decision_window_ms": -1}],
)
def test_table_settings_the_ledger_or_the_clock_cannot_hold_are_refused(
    studio: Studio, settings: dict[str, int]
) -> None:
    response = studio.client.post(
        "/v1/operator/tables",
        json={"id": "big", "settings": settings, "allow_return_over_100": True},
        headers=studio.auth("op"),
    )
    assert response.status_code == 422 and response.json()["code"] == "invalid_settings"
    assert studio.client.get("/v1/tables").json() == [
        t for t in studio.client.get("/v1/tables").json() if t["table_id"] != "big"
    ]


def test_money_goes_only_to_players_that_exist(studio: Studio) -> None:
    unknown = studio.post("op", "/v1/operator/players/ghost/deposit", {"amount": 100}, "k1")
    assert unknown.status_code == 404 and "player 'ghost' does not exist" in unknown.json()["message"]  # type: ignore[attr-defined]
    dealer = studio.post("op", "/v1/operator/players/dealer/deposit", {"amount": 100}, "k2")
    assert dealer.status_code == 422 and "holds no wallet" in dealer.json()["message"]  # type: ignore[attr-defined]
    assert studio.post("op", "/v1/operator/players/ghost/withdraw", {"amount": 1}, "k3").status_code == 404  # type: ignore[attr-defined]
    wallet = studio.client.get("/v1/operator/players/ghost/wallet", headers=studio.auth("op")).json()
    assert wallet["balance"] == 0, "no wallet came into being"


def test_a_body_over_the_limit_is_refused_before_it_is_read(studio: Studio) -> None:
    huge = b'{"bets": [' + b" " * (20 * 1024 * 1024) + b"]}"
    declared = studio.client.post(
        "/v1/operator/tables", content=huge, headers=studio.auth("op") | {"content-type": "application/json"}
    )
    assert declared.status_code == 413 and declared.json()["code"] == "body_too_large"

    def chunks() -> Iterator[bytes]:
        yield b'{"id": "t2", "settings": {"x": "'
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b"y" * 1024
        yield b'"}}'

    streamed = studio.client.post(
        "/v1/operator/tables", content=chunks(), headers=studio.auth("op") | {"content-type": "application/json"}
    )
    assert streamed.status_code == 413 and streamed.json()["code"] == "body_too_large"
    small = studio.client.post(
        "/v1/operator/tables", json={"id": "t2", "allow_return_over_100": True}, headers=studio.auth("op")
    )
    assert small.status_code == 201


def test_a_database_that_is_down_gets_a_json_503_with_retry_after(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/missing/folder/studio.db")  # cannot be opened
    with TestClient(create_app(engine)) as client:
        for method, path in [("GET", "/v1/tables"), ("GET", "/v1/wallet"), ("POST", "/v1/operator/tables")]:
            response = client.request(method, path, headers={"Authorization": "Bearer x"}, json={"id": "t"})
            assert response.status_code == 503, (path, response.text)
            assert response.json()["code"] == "database_unavailable"
            assert response.headers["Retry-After"] == "2"
