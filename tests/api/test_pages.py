"""The studio's pages are served, and the dealer console feed relays the controller's view to staff only."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.api.consoles import ViewRelay
from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import ControllerStatus, encode
from services.rounds.players import PlayerService
from tests.api.conftest import Studio
from tests.support import wait_until


def test_the_pages_and_their_scripts_are_served_and_unknown_tables_are_404(studio: Studio) -> None:
    for path, marker in [
        ("/", "Studio"),
        ("/console/t1", "Dealer console"),
        ("/overlay/t1", "Overlay"),
        ("/ops", "Operator · rounds"),
    ]:
        response = studio.client.get(path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html"), path
        assert f"<title>{marker}</title>" in response.text
    assert "function follow(" in studio.client.get("/static/studio.js").text
    assert "async function showRound(" in studio.client.get("/static/ops.js").text
    assert studio.client.get("/console/nope").json()["code"] == "not_found"
    assert studio.client.get("/overlay/nope").status_code == 404
    assert studio.client.get("/v1/tables").json() == [
        {"table_id": "t1", "game": "pokdeng", "currency": "THB", "player_page": "/play/t1"}
    ]


def test_the_dealer_feed_needs_a_dealer_or_operator_and_a_broker(studio: Studio) -> None:
    path = "/v1/tables/t1/dealer/stream?changes=1"
    assert studio.client.get(path).json()["code"] == "unauthorized"
    refused = studio.client.get(path, headers=studio.auth("ana"))
    assert refused.status_code == 403 and "dealer or operator" in refused.json()["message"]
    studio.client.delete("/v1/operator/tables/t1/dealers/dealer", headers=studio.auth("op"))
    unassigned = studio.client.get(path, headers=studio.auth("dealer"))
    assert unassigned.status_code == 403 and "not assigned to table t1" in unassigned.json()["message"]
    assert studio.client.put("/v1/operator/tables/t1/dealers/dealer", headers=studio.auth("op")).json() == {
        "table_id": "t1", "dealers": ["dealer"],
    }  # fmt: skip
    unavailable = studio.client.get(path, headers=studio.auth("dealer"))  # this app has no broker connection
    assert unavailable.status_code == 503 and unavailable.json()["code"] == "console_unavailable"
    assert studio.client.get("/v1/tables/nope/dealer/stream", headers=studio.auth("op")).status_code == 404


def test_the_dealer_feed_relays_each_new_controller_view_and_ignores_junk(database: Engine, mqtt_url: str) -> None:
    table = f"c{time.monotonic_ns() % 10**9}"
    views = ViewRelay(mqtt_url)
    publisher = make_client("")
    connect(publisher, mqtt_url)
    app = create_app(database, relay=views)
    players: PlayerService = app.state.services.players
    staff = {"Authorization": f"Bearer {players.register('pit', 'dealer')}"}
    operator = {"Authorization": f"Bearer {players.register('op', 'operator')}"}
    try:
        views.subscribed.wait(10)
        wait_until(publisher.is_connected, 10, "the publisher to connect")
        with TestClient(app) as client:
            client.post("/v1/operator/tables", json={"id": table, "allow_return_over_100": True}, headers=operator)
            client.put(f"/v1/operator/tables/{table}/dealers/pit", headers=operator)
            first = stream(client, f"/v1/tables/{table}/dealer/stream?changes=1", staff)
            assert first == [{"v": 1, "table_id": table, "waiting_for": "the round controller (no dealer view yet)"}]

            def publish(payload: bytes) -> None:
                publisher.publish(topics.round_dealer(table), payload, qos=1, retain=True).wait_for_publish(5)

            view = {"v": 1, "table_id": table, "round_id": f"{table}-1", "phase": "dealing", "alerts": []}
            publish(json.dumps(view).encode())
            wait_until(lambda: views.latest(table) is not None, 10, "the relayed view")
            later = view | {"alerts": [{"kind": "refused_card", "message": "card 4S during betting"}]}
            status = topics.controller_status(f"controller-{table}")

            def publish_later() -> None:
                time.sleep(0.3)
                publish(b"not json")  # a broken message changes nothing
                publish(json.dumps(later | {"table_id": "elsewhere"}).encode())  # nor another table's view
                publish(json.dumps(later | {"next_card": {"position": "A"}}).encode())  # nor one off its schema
                publish(json.dumps(later).encode())
                for state in ("online", "offline"):  # the controller's retained status, then its last will
                    time.sleep(0.3)
                    payload = ControllerStatus(controller="c", state=state, tables=[table], ts="2026-12-03T00:00:00")
                    publisher.publish(status, encode(payload), qos=1, retain=True).wait_for_publish(5)

            threading.Thread(target=publish_later, daemon=True).start()
            events = stream(client, f"/v1/tables/{table}/dealer/stream?changes=4", staff)
            assert [event["controller"] for event in events] == ["unknown", "unknown", "online", "offline"]
            assert [event["alerts"] for event in events] == [[], later["alerts"], later["alerts"], later["alerts"]]
            publisher.publish(status, b"", qos=1, retain=True).wait_for_publish(5)
    finally:
        publisher.publish(topics.round_dealer(table), b"", qos=1, retain=True).wait_for_publish(5)  # clear
        publisher.disconnect()
        publisher.loop_stop()
        views.close()


def stream(client: TestClient, path: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200, response.read()
        return [json.loads(line[len("data: ") :]) for line in response.iter_lines() if line.startswith("data: ")]


def test_a_table_moved_to_another_controller_is_online_while_any_controller_listing_it_is(mqtt_url: str) -> None:
    views = ViewRelay(mqtt_url)
    try:

        def receive(topic: str, payload: bytes) -> None:
            message = mqtt.MQTTMessage(topic=topic.encode())
            message.payload = payload
            views._on_message(views.client, None, message)

        def status(name: str, state: str, tables: list[str]) -> None:
            payload = ControllerStatus(controller=name, state=state, tables=tables, ts="2026-12-03T00:00:00")  # type: ignore[arg-type]
            receive(topics.controller_status(name), encode(payload))

        receive(topics.round_dealer("T7"), b'{"v": 1, "table_id": "T7"}')
        status("controller-new", "online", ["T7", "T8"])
        status("controller-old", "offline", ["T7"])  # its retained will, delivered after the new one's status
        assert views.latest("T7") == {"v": 1, "table_id": "T7", "controller": "online"}
        status("controller-new", "offline", ["T7", "T8"])
        assert views.latest("T7")["controller"] == "offline"  # type: ignore[index]
        receive(topics.controller_status("controller-new"), b"")  # both retained statuses cleared
        receive(topics.controller_status("controller-old"), b"")
        assert views.latest("T7")["controller"] == "unknown"  # type: ignore[index]
        assert views.latest("T8") is None
    finally:
        views.close()
