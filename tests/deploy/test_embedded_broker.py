"""The embedded broker's public-feed user reads the public round state and nothing else, and publishes nothing."""

from __future__ import annotations

import time

from services.bus import topics
from services.bus.broker import SnapshotSubscriptions, embedded_broker, public_feed_url
from services.bus.client import Subscriber, connect, make_client
from tests.support import wait_until


def test_the_public_feed_user_reads_only_the_public_state_and_cannot_publish() -> None:
    with embedded_broker() as url:
        everything = Subscriber(url, ["studio/v1/#"])  # anonymous: a studio process on this machine
        public_all = Subscriber(public_feed_url(url), ["studio/v1/#"])
        public_state = Subscriber(public_feed_url(url), [topics.round_state("T1")])
        for subscriber in (everything, public_all, public_state):
            subscriber.wait_subscribed()
        studio, forger = make_client(""), make_client("")
        connect(studio, url)
        connect(forger, public_feed_url(url))
        wait_until(lambda: studio.is_connected() and forger.is_connected(), 10, "the publishers to connect")
        forger.publish(topics.shoe_cards("T1"), b'{"forged": true}', qos=1).wait_for_publish(5)
        for topic in (topics.shoe_cards("T1"), topics.round_dealer("T1"), topics.round_state("T1")):
            studio.publish(topic, b"{}", qos=1).wait_for_publish(5)
        wait_until(lambda: len(everything.messages) >= 3, 10, "the studio's three messages")
        time.sleep(0.3)  # time for anything wrongly allowed to arrive
        assert [m.payload for m in everything.messages if m.topic.endswith("/shoe/cards")] == [b"{}"]  # no forgery
        assert public_all.messages == []  # a subscription to everything is refused
        assert [m.topic for m in public_state.messages] == [topics.round_state("T1")]
        for client in (studio, forger):
            client.disconnect()
            client.loop_stop()
        for subscriber in (everything, public_all, public_state):
            subscriber.close()


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
