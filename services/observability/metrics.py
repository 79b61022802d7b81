"""The studio's Prometheus metrics, one definition each, shared by every process that moves them.

``deploy/prometheus/alerts.yml`` and ``deploy/grafana/studio.json`` read these names; ``tests/deploy`` holds them
to it, and the topology test fires each alert by breaking what it watches.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)  # seconds: a request, a call

# ---- the round controller -----------------------------------------------------------------------------------
CARDS = Counter(
    "studio_cards_total", "Shoe cards taken by the controller, by what became of them", ["table", "disposition"]
)
CARDS_REFUSED = Counter(
    "studio_cards_refused_total", "Shoe messages the controller refused, by why", ["table", "reason"]
)  # reason: wrong_shoe, already_dealt, not_expected, face_down_again, game_refused, untrusted, out_of_sequence
ALERTS = Counter("studio_alerts_total", "Alerts raised to the dealer console", ["table", "kind"])
ROUND_PHASES = Counter("studio_round_phases_total", "Rounds entering each phase", ["table", "game", "phase"])
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
DEVICE_ONLINE = Gauge(
    "studio_device_online", "1 while a table's device says it is online with its reader connected", ["table", "device"]
)  # device: shoe, camera (as the controller last heard from its daemon's retained status)
LEASE_HELD = Gauge(
    "studio_lease_held", "1 while this controller holds the table's lease (0: waiting, or lost)", ["table"]
)
LEASE_EPOCH = Gauge(
    "studio_lease_epoch", "The epoch of the table's lease this controller holds (+1 a takeover)", ["table"]
)
LEASE_RENEW_SECONDS = Histogram("studio_lease_renew_seconds", "Time a lease renewal took in the database", buckets=FAST)
LEASE_RENEW_FAILURES = Counter("studio_lease_renew_failures_total", "Lease renewals the database did not take")

# ---- the shoe daemon ---------------------------------------------------------------------------------------
SHOE_CARDS = Counter("studio_shoe_cards_total", "Cards read by a shoe daemon", ["shoe", "source"])
SHOE_ALARMS = Counter("studio_shoe_alarms_total", "Alarms raised by a shoe daemon", ["shoe", "kind"])
OUTBOX_DEPTH = Gauge("studio_shoe_outbox_depth", "Shoe messages not yet acknowledged by the broker", ["shoe"])

# ---- the API -----------------------------------------------------------------------------------------------
HTTP_REQUESTS = Counter(
    "studio_http_requests_total", "HTTP requests answered, by route template and status", ["method", "route", "status"]
)
HTTP_SECONDS = Histogram(
    "studio_http_request_seconds", "Time to an HTTP answer's first byte, by route template", ["method", "route"],
    buckets=FAST,
)  # fmt: skip
SSE_CLIENTS = Gauge("studio_sse_clients", "Server-sent event streams open, by stream", ["stream"])
ROUND_OVERDUE = Gauge(
    "studio_round_overdue_seconds",
    "How long a table's open window (betting, a decision…) has been past its close, as the API last heard",
    ["table"],
)
WALLET_CALL_SECONDS = Histogram(
    "studio_wallet_call_seconds", "The operator's wallet: time to its answer", ["kind"], buckets=FAST
)
WALLET_CALLS = Counter(
    "studio_wallet_calls_total", "The operator's wallet: calls by what came back", ["kind", "outcome"]
)  # outcome: ok, refused, no_answer
WALLET_PENDING = Gauge("studio_wallet_pending_calls", "The operator's wallet: calls not yet answered (the outbox)")
