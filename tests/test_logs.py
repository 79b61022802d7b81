"""Structured logs: one JSON object per line, carrying the table and round of the record."""

from __future__ import annotations

import json
import logging

from services.observability.logs import JsonFormatter


def test_a_record_becomes_one_json_line_with_its_table_and_round() -> None:
    record = logging.LogRecord("studio.controller", logging.WARNING, __file__, 1, "card %s refused", ("AS",), None)
    record.table, record.round_id = "T1", "T1-7"
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == "card AS refused" and entry["level"] == "warning"
    assert (entry["table"], entry["round_id"], entry["logger"]) == ("T1", "T1-7", "studio.controller")
