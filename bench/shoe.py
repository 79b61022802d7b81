"""Benchmark: a card frame written on the shoe's serial line → the MQTT message at a subscriber.

    .venv/bin/python bench/shoe.py [--cards 1000] [--interval 0.005] [--broker mqtt://host:port]

Path: the pty shoe simulator writes a monitor-dialect frame; the real serial driver reads and
parses it, the shoe daemon stamps it, stores it in its outbox (SQLite, fsync) and publishes it
with QoS 1; a subscriber on the card topic receives it. Latency is receive time − write time,
one card every ``interval`` seconds (paced: this measures latency, not throughput).

Floor, in the same run and on the same broker: a plain paho client publishing a payload of the
same size with QoS 1 to a subscriber — the broker's own publish → receive round trip.
Default broker: the embedded amqtt on a free port; ``--broker`` for another (Mosquitto).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hardware.serial_shoe import Backoff, SerialShoe
from hardware.sim import VirtualShoe, shuffled_deck
from services.bus import topics
from services.bus.broker import embedded_broker
from services.bus.client import Subscriber, connect, make_client
from services.shoe.daemon import ShoeConfig, ShoeDaemon

PAYLOAD_SIZE = 260  # bytes: about one stamped card message


@contextmanager
def broker(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with embedded_broker() as embedded:
        yield embedded


def percentiles(values: list[float]) -> tuple[float, float, float, float]:
    ordered = sorted(values)
    p = lambda q: 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return p(0.50), p(0.99), 1000 * ordered[-1], 1000 * statistics.fmean(ordered)


def floor(url: str, count: int, interval: float) -> list[float]:
    topic = f"{topics.ROOT}/bench/floor-{time.monotonic_ns()}"
    subscriber = Subscriber(url, [topic])
    subscriber.wait_subscribed()
    publisher = make_client("bench-floor")
    connect(publisher, url)
    while not publisher.is_connected():
        time.sleep(0.01)
    sent: list[float] = []
    for index in range(count):
        sent.append(time.perf_counter())
        publisher.publish(topic, index.to_bytes(4, "big") + b"x" * (PAYLOAD_SIZE - 4), qos=1)
        time.sleep(interval)
    messages = subscriber.wait_for(count, timeout=60)
    arrived = {int.from_bytes(m.payload[:4], "big"): m.timestamp for m in messages}
    publisher.disconnect()
    publisher.loop_stop()
    subscriber.close()
    return [arrived[i] - sent[i] for i in range(count)]


def shoe_path(url: str, count: int, interval: float, directory: Path) -> list[float]:
    table = f"bench{time.monotonic_ns() % 10**9}"
    subscriber = Subscriber(url, [topics.shoe_cards(table)])
    subscriber.wait_subscribed()
    sim = VirtualShoe("monitor", directory / "pty")
    config = ShoeConfig(table, f"{table}-shoe", directory / "outbox.db", url, source="sim", heartbeat=1.0)
    daemon = ShoeDaemon(config, SerialShoe(str(sim.path), "monitor", read_timeout=0.05, backoff=Backoff()).events)
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    thread.start()
    while daemon.device_state != "connected":
        time.sleep(0.01)
    cards = [card for deck in range(count // 52 + 1) for card in shuffled_deck(deck)][:count]
    sent: list[float] = []
    for card in cards:
        sent.append(time.perf_counter())
        sim.deal(card)
        time.sleep(interval)
    messages = subscriber.wait_for(count, timeout=120)
    stop.set()
    thread.join(timeout=10)
    sim.close()
    subscriber.close()
    # paho stamps each message with time.monotonic() on arrival; perf_counter shares its clock on Linux
    return [message.timestamp - start for message, start in zip(messages, sent, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cards", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=0.005, help="seconds between cards")
    parser.add_argument("--broker", default=None, help="mqtt://host:port (default: embedded amqtt on a free port)")
    args = parser.parse_args()
    with broker(args.broker) as url, tempfile.TemporaryDirectory() as directory:
        base = floor(url, args.cards, args.interval)
        path = shoe_path(url, args.cards, args.interval, Path(directory))
    print(f"broker {url} ({'given' if args.broker else 'embedded amqtt'}), {args.cards} messages, "
          f"one every {1000 * args.interval:.0f} ms")  # fmt: skip
    print(f"{'what':<52}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}{'mean ms':>9}")
    rows = [("floor: paho publish → subscriber (QoS 1)", base), ("shoe: frame on the pty → subscriber", path)]
    for label, values in rows:
        print(
            f"{label:<52}" + "".join(f"{v:>8.2f}" for v in percentiles(values)[:3]) + f"{percentiles(values)[3]:>9.2f}"
        )
    ratio = [s / f for s, f in zip(percentiles(path), percentiles(base), strict=True)]
    print(f"ratio shoe/floor: p50 {ratio[0]:.1f}×, p99 {ratio[1]:.1f}×")
    figures = {
        "cards": args.cards,
        "shoe_p50_ms": round(percentiles(path)[0], 2),
        "shoe_p99_ms": round(percentiles(path)[1], 2),
    }
    figures |= {"floor_p50_ms": round(percentiles(base)[0], 2), "floor_p99_ms": round(percentiles(base)[1], 2)}
    print(json.dumps(figures | {"ratio_p99": round(ratio[1], 2)}))  # the last line: the figures


if __name__ == "__main__":
    main()
