from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.api.deps import Services
from services.cards import Card
from services.rounds.clock import ManualClock
from services.rounds.players import PlayerService
from services.rounds.service import Applied


@dataclass
class Studio:
    """An API on a real database with an operator, two players and a table, ready to bet."""

    app: FastAPI
    client: TestClient
    clock: ManualClock
    tokens: dict[str, str]

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def post(self, who: str, path: str, body: object = None, key: str | None = None) -> object:
        headers = self.auth(who) | ({"Idempotency-Key": key} if key else {})
        return self.client.post(path, json=body if body is not None else {}, headers=headers)

    def shoe(self, round_id: str, code: str) -> Applied:
        """A card from the table's shoe, as the controller deals it once its signature checked (no route deals)."""
        return self.services.rounds.deal(round_id, Card.from_code(code), "shoe")

    @property
    def services(self) -> Services:
        services: Services = self.app.state.services
        return services


@pytest.fixture
def studio(database: Engine) -> Iterator[Studio]:
    clock = ManualClock()
    app = create_app(database, clock)
    players: PlayerService = app.state.services.players
    staff = [("op", "operator"), ("op2", "operator"), ("dealer", "dealer"), ("admin", "admin")]
    tokens = {name: players.register(name, role) for name, role in staff}
    tokens |= {name: players.register(name) for name in ("ana", "binh", "chai")}
    with TestClient(app) as client:
        studio = Studio(app, client, clock, tokens)
        assert (
            client.post(
                "/v1/operator/tables", json={"id": "t1", "allow_return_over_100": True}, headers=studio.auth("op")
            ).status_code
            == 201
        )
        players.assign("t1", "dealer")
        for index, name in enumerate(("ana", "binh", "chai")):
            response = studio.post("op", f"/v1/operator/players/{name}/deposit", {"amount": 10_000}, f"fund{index}")
            assert response.status_code == 200  # type: ignore[attr-defined]
        yield studio
