"""The embedded broker's own fixes to amqtt (its roles and ACL: test_broker_acl.py, on both brokers)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from services.bus import broker
from services.bus.access import StudioBroker
from services.bus.broker import SnapshotSubscriptions, embedded_broker


def test_the_subscription_table_is_iterated_over_a_snapshot() -> None:
    """amqtt iterates it across awaits; a plain dict raised when a client subscribed mid-broadcast."""
    with embedded_broker():
        pass  # starts and stops with the snapshot table in place
    table = SnapshotSubscriptions({"a/#": []})
    for _filter, _subscriptions in table.items():
        table["b/#"] = []  # what a client subscribing mid-broadcast does: no RuntimeError
    for _filter in table:
        table["c/#"] = []
    assert sorted(table) == ["a/#", "b/#", "c/#"]


def test_a_broker_that_hangs_on_shutdown_is_stopped_anyway(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that never closes once held a test run's teardown for 30 s and failed it: the tasks are cancelled."""

    async def hang(_broker: StudioBroker) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(broker, "SHUTDOWN_S", 0.2)
    monkeypatch.setattr(StudioBroker, "shutdown", hang)
    before = {thread.ident for thread in threading.enumerate() if thread.name == "embedded-broker"}
    with embedded_broker():
        pass
    left = [t for t in threading.enumerate() if t.name == "embedded-broker" and t.ident not in before]
    assert left == []  # its thread ended: nothing waits on it
