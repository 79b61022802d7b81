"""The studio's Prometheus metrics, one definition each, shared by every process that moves them."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

CARDS = Counter(
    "studio_cards_total", "Shoe cards taken by the controller, by what became of them", ["table", "disposition"]
)
ALERTS = Counter("studio_alerts_total", "Alerts raised to the dealer console", ["table", "kind"])
ROUND_PHASES = Counter("studio_round_phases_total", "Rounds entering each phase", ["table", "phase"])
DECISION_TIMEOUTS = Counter("studio_decision_timeouts_total", "Decision windows that ran out", ["table"])
SETTLEMENT_SECONDS = Histogram(
    "studio_settlement_seconds",
    "Time to settle a round in the ledger",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5),
)
RECEIVE_LAG = Histogram(
    "studio_mqtt_receive_lag_seconds", "Shoe stamp to controller receipt", ["table"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5),
)  # fmt: skip
SHOE_CARDS = Counter("studio_shoe_cards_total", "Cards read by a shoe daemon", ["shoe", "source"])
SHOE_ALARMS = Counter("studio_shoe_alarms_total", "Alarms raised by a shoe daemon", ["shoe", "kind"])
OUTBOX_DEPTH = Gauge("studio_shoe_outbox_depth", "Shoe messages not yet acknowledged by the broker", ["shoe"])
