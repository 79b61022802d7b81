"""Telling the round controller that the API changed a round, so it acts at once (not at its next re-read)."""

from __future__ import annotations

from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import RoundChanged, encode
from services.rounds.service import table_of_round


class RoundNotifier:
    """Publishes ``{"v": 1, "round_id": …}`` on the table's ``…/round/commands`` (QoS 1; queued while offline)."""

    def __init__(self, url: str) -> None:
        self.client = make_client("")
        connect(self.client, url)

    def __call__(self, round_id: str) -> None:
        table = table_of_round(round_id)
        self.client.publish(topics.round_commands(table), encode(RoundChanged(round_id=round_id)), qos=1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
