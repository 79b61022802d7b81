"""The API's own metrics, as Prometheus reads them from ``/metrics``: every answer counted and timed by its route's
template and status, the open streams, and how long a table's window has been past its close."""

from __future__ import annotations

import json
from datetime import datetime

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
    after = scrape(studio)

    def grew(series: str) -> float:
        return after.get(series, 0) - before.get(series, 0)

    assert grew(f'studio_http_requests_total{{method="POST",{BETS},status="201"}}') == 1
    assert grew(f'studio_http_requests_total{{method="POST",{BETS},status="422"}}') == 1
    assert grew('studio_http_requests_total{method="GET",route="unmatched",status="404"}') == 1
    assert grew(f'studio_http_request_seconds_count{{method="POST",{BETS}}}') == 2  # one name, whatever the round
    assert not any(round_id in series for series in after), "a round's id in a series name: one series per round"


def test_open_streams_are_counted_and_a_window_left_open_past_its_close_is_measured(studio: Studio) -> None:
    round_id = open_round(studio)
    clients = 'studio_sse_clients{stream="state"}'
    overdue = 'studio_round_overdue_seconds{table="t1"}'
    before = scrape(studio).get(clients, 0)
    with studio.client.stream("GET", "/v1/tables/t1/state/stream") as response:
        state = next(json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: "))
        assert state["round_id"] == round_id and state["window_closes_at"]
        watching = scrape(studio)
        closes = datetime.fromisoformat(state["window_closes_at"])
        studio.clock.advance(seconds=(closes - studio.clock.now()).total_seconds() + 7)  # nobody closed it
        late = scrape(studio)
    assert watching[clients] == before + 1
    assert watching[overdue] == 0
    assert late[overdue] == 7  # the window closed 7 s ago and the round has not moved on
    assert scrape(studio)[clients] == before
