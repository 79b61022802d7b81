"""Fuzz the API from its own OpenAPI document: no request, however malformed, gets a 5xx.

Every operation is called as an operator (who reaches the operator tools) and as a player, with
bodies, paths, queries and headers generated from the schema, against a real database holding
an open round.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import schemathesis
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.api.conftest import Studio

EXAMPLES_PER_OPERATION = int(os.environ.get("STUDIO_FUZZ_EXAMPLES", "25"))


def fuzzer(studio: Studio, operation: Any) -> Callable[[], None]:
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None)
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        case = data.draw(operation.as_strategy())
        for who in ("op", "ana"):
            response = case.call(headers=dict(case.headers or {}) | studio.auth(who))
            assert response.status_code < 500, (who, case.method, case.formatted_path, case.body, response.text)
            if response.status_code >= 400:
                body = response.json()
                assert {"code", "message"} <= set(body) <= {"code", "message", "reason", "params"}, body
                assert body["message"] and (("reason" in body) == ("params" in body)), body  # a reason, with params

    return fuzz  # type: ignore[no-any-return]


def test_no_request_gets_a_server_error(studio: Studio) -> None:
    studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("op"))
    schema = schemathesis.openapi.from_asgi("/openapi.json", studio.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    operations = [op for op in operations if not op.path.endswith("/stream")]  # streams run until it changes
    assert len(operations) >= 20
    for operation in operations:
        fuzzer(studio, operation)()
