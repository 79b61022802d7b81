"""The API's own metrics, as Prometheus reads them from ``/metrics``: every answer counted and timed by its route's
template and status, the open streams, and how long a table's window has been past its close (measured on the views
the broker relays)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prometheus_client import REGISTRY

from services.api.app import overdue
from services.api.fanout import Hub
from tests.api.conftest import Studio
from tests.api.test_api import bet, open_round

BETS = 'route="/v1/rounds/{round_id}/bets"'


def scrape(studio: Studio) -> dict[str, float]:
    lines = studio.client.get("/metrics").text.splitlines()
    series = (line.rsplit(" ", 1) for line in lines if line and not line.startswith("#"))
    return {name: float(value) for name, value in series}


def test_every_answer_is_counted_and_timed_by_its_route_template_and_status(studio: Studio) -> None:
    before = scrape(studio)
    round_id = open_round(studio)
    assert bet(studio, "ana", round_id, [{"side": "player", "seat": "A", "stake": 100}], "m1").status_code == 201
    assert bet(studio, "binh", round_id, [{"side": "player", "seat": "Z", "stake": 100}], "m2").status_code == 422
    assert studio.client.get("/v1/nowhere").status_code == 404
    assert studio.client.request("PROPFIND", "/v1/me").status_code == 405
    after = scrape(studio)

    def grew(series: str) -> float:
        return after.get(series, 0) - before.get(series, 0)

    assert grew(f'studio_http_requests_total{{method="POST",{BETS},status="201"}}') == 1
    assert grew(f'studio_http_requests_total{{method="POST",{BETS},status="422"}}') == 1
    assert grew('studio_http_requests_total{method="GET",route="unmatched",status="404"}') == 1
    assert grew(f'studio_http_request_seconds_count{{method="POST",{BETS}}}') == 2  # one name, whatever the round
    assert grew('studio_http_requests_total{method="other",route="/v1/me",status="405"}') == 1  # a client's word
    assert not any(round_id in series for series in after), "a round's id in a series name: one series per round"


def test_open_streams_are_counted_while_they_are_open(studio: Studio) -> None:
    open_round(studio)
    clients = 'studio_sse_clients{stream="state"}'
    before = scrape(studio).get(clients, 0)
    with studio.client.stream("GET", "/v1/tables/t1/state/stream") as response:
        next(line for line in response.iter_lines() if line.startswith("data: "))
        watching = scrape(studio)
    assert watching[clients] == before + 1
    assert scrape(studio)[clients] == before


def test_a_window_left_open_past_its_close_is_measured_and_a_bad_time_is_skipped() -> None:
    now = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    states = Hub()
    states.publish("M1", {"phase": "betting", "window_closes_at": (now + timedelta(seconds=3)).isoformat()})
    states.publish("M2", {"phase": "dealing", "window_closes_at": (now - timedelta(seconds=7)).isoformat()})
    states.publish("M3", {"phase": "dealing", "window_closes_at": None})
    states.publish("M4", {"phase": "betting", "window_closes_at": "2026-12-07T11:59:00"})  # no zone: not comparable
    states.publish("M5", {"phase": "betting", "window_closes_at": "soon"})
    overdue(states, now)  # never raises: a scrape does not fail on one table's view
    seconds = {t: REGISTRY.get_sample_value("studio_round_overdue_seconds", {"table": t}) for t in states.values()}
    assert seconds == {"M1": 0, "M2": 7, "M3": 0, "M4": None, "M5": None}
