"""The bet slip's lane (``services.api.slip_route``): the plain case answered before the framework, exactly as the
route answers it; everything else answered by the route itself, as before."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from prometheus_client import REGISTRY

from services.api.slip_route import TEMPLATE, SlipLane
from tests.api.conftest import Studio
from tests.api.test_api import bet, open_round

SLIP = [{"side": "player", "seat": "A", "stake": 100}]


def lane(studio: Studio) -> SlipLane:
    taken: SlipLane = studio.app.state.slip_lane
    return taken


def counted(status: int) -> float:
    return REGISTRY.get_sample_value("studio_http_requests_total", {"method": "POST", "route": TEMPLATE,
                                                                    "status": str(status)}) or 0.0  # fmt: skip


def test_the_lane_answers_a_plain_slip_as_the_route_does(studio: Studio) -> None:
    round_id = open_round(studio)
    first = bet(studio, "ana", round_id, SLIP, "s1")  # the round's game not yet known here: the route answers
    assert first.status_code == 201 and lane(studio).answered == 0
    before = counted(201)
    second = bet(studio, "ana", round_id, [{"side": "player", "seat": "B", "stake": 50}], "s2")
    assert second.status_code == 201 and lane(studio).answered == 1
    assert second.json() == {"round_id": round_id, "balance": 10_000 - 300 - 150,
                             "wagers": [{"wager_id": second.json()["wagers"][0]["wager_id"], "side": "player",
                                         "seat": "B", "stake": 50}]}  # fmt: skip
    assert second.headers["content-type"] == "application/json"
    again = bet(studio, "ana", round_id, SLIP, "s1")  # a retry of the route's answer, through the lane
    assert lane(studio).answered == 2 and again.status_code == 201 and again.content == first.content
    assert counted(201) == before + 2  # under the route's template, as the app counts its routes


def test_what_the_lane_does_not_take_the_route_answers(studio: Studio) -> None:
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, SLIP, "warm").status_code == 201  # the round's game known from here
    path = f"/v1/rounds/{round_id}/bets"
    no_key = studio.client.post(path, json={"bets": SLIP}, headers=studio.auth("ana"))
    assert no_key.status_code == 422 and "Idempotency-Key" in no_key.json()["message"]
    bad = studio.post("ana", path, {"bets": [{"side": "player", "seat": "A", "stake": "lots"}]}, "b1")
    assert bad.status_code == 422 and "stake" in bad.json()["message"]  # type: ignore[attr-defined]
    stranger = studio.client.post(path, json={"bets": SLIP}, headers={"Authorization": "Bearer nobody",
                                                                      "Idempotency-Key": "b2"})  # fmt: skip
    assert stranger.status_code == 401
    dealer = studio.post("dealer", path, {"bets": SLIP}, "b3")
    assert dealer.status_code == 403  # type: ignore[attr-defined]
    text = studio.client.post(path, content=json.dumps({"bets": SLIP}), headers=studio.auth("ana") | {
        "Idempotency-Key": "b4", "Content-Type": "text/plain"})  # fmt: skip
    assert text.status_code == 422
    large = studio.post("ana", path, {"bets": SLIP, "pad": "x" * 70_000}, "b5")
    assert large.status_code == 413  # type: ignore[attr-defined]
    assert lane(studio).answered == 0
    assert studio.services.wallets.balance("ana")["balance"] == 10_000 - 300  # nothing of them placed


def test_a_refusal_in_the_lane_is_the_routes_refusal(studio: Studio) -> None:
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, SLIP, "warm").status_code == 201
    path = f"/v1/rounds/{round_id}/bets"
    by_route = studio.client.post(f"{path}?via=route", json={"bets": [{"side": "player", "seat": "A", "stake": 4_000}]},
                                  headers=studio.auth("ana") | {"Idempotency-Key": "r1"})  # fmt: skip
    by_lane = bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 4_000}], "r2")
    assert lane(studio).answered == 1
    assert by_lane.status_code == by_route.status_code == 409 and by_lane.json() == by_route.json()
    assert by_lane.json()["code"] == "insufficient_funds"


def test_a_slip_sent_in_pieces_is_read_whole(studio: Studio) -> None:
    round_id = open_round(studio)
    assert bet(studio, "binh", round_id, SLIP, "warm").status_code == 201
    body = json.dumps({"bets": [{"side": "player", "seat": "C", "stake": 20}]}).encode()
    pieces = [body[:7], body[7:20], body[20:]]
    status, answer = asyncio.run(asgi_post(studio, f"/v1/rounds/{round_id}/bets", "binh", "p1", pieces))
    assert status == 201 and answer["wagers"][0]["seat"] == "C" and lane(studio).answered == 1


async def asgi_post(
    studio: Studio, path: str, who: str, key: str, pieces: list[bytes], headers: list[tuple[str, str]] | None = None
) -> tuple[int, Any]:
    """A POST straight to the app, its body in ``pieces`` (as a slow client's arrives); ``headers`` instead of the
    player's token, the key and the JSON type."""
    messages = [{"type": "http.request", "body": piece, "more_body": n < len(pieces) - 1}
                for n, piece in enumerate(pieces)]  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = headers or [("authorization", f"Bearer {studio.tokens[who]}"), ("idempotency-key", key),
                          ("content-type", "application/json")]  # fmt: skip
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(name.encode(), value.encode()) for name, value in headers],
             "client": ("127.0.0.1", 5000), "server": ("testserver", 80)}  # fmt: skip
    await studio.app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


def test_the_lane_leaves_doubtful_requests_to_the_route(studio: Studio) -> None:
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, SLIP, "warm").status_code == 201
    path = f"/v1/rounds/{round_id}/bets"
    body = json.dumps({"bets": SLIP}).encode()
    no_type = studio.client.post(path, content=body, headers=studio.auth("ana") | {"Idempotency-Key": "t1"})
    assert no_type.status_code == 422  # the framework reads no JSON without its content type
    ana, binh = (f"Bearer {studio.tokens[who]}" for who in ("ana", "binh"))
    twice = [("authorization", ana), ("authorization", binh), ("idempotency-key", "first"),
             ("idempotency-key", "last"), ("content-type", "application/json")]  # fmt: skip
    status, _ = asyncio.run(asgi_post(studio, path, "", "", [body], headers=twice))
    assert status == 201  # the route's reading of repeated headers (the first), not another
    assert studio.services.wallets.balance("binh")["balance"] == 10_000
    deep = b'{"bets": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
    nested = studio.client.post(path, content=deep, headers=studio.auth("ana") | {
        "Idempotency-Key": "t2", "Content-Type": "application/json"})  # fmt: skip
    assert nested.status_code in (400, 422) and "code" in nested.json()  # a clear refusal, no traceback
    assert lane(studio).answered == 0
