"""The embedded broker's own fixes to amqtt (its roles and ACL: test_broker_acl.py, on both brokers)."""

from __future__ import annotations

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
