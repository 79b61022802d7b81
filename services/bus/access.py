"""Who may connect to the embedded broker and what each role may read and write.

The same roles and ACL as production Mosquitto: read from ``deploy/mosquitto/acl`` (one definition),
with generated passwords kept in the run directory (mode 0600) beside the broker's URL, so the
studio's own processes log in as their role. No anonymous client. Plus one local superuser
(``studio``) for the studio's own tools, tests and benchmarks on this machine.

As in Mosquitto, a subscription is accepted and each message is delivered only where its topic is
readable by the subscriber's role — retained messages included (amqtt's own ACL plugin checks only
the subscription's filter, and amqtt sends retained messages past it: see ``StudioBroker``).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from amqtt.broker import Action, Broker
from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin
from amqtt.session import Session
from paho.mqtt.client import topic_matches_sub

ACL_FILE = Path(__file__).resolve().parents[2] / "deploy" / "mosquitto" / "acl"
PASSWORDS_FILE = "broker.passwords"
ADMIN = "studio"  # the local superuser: the studio's own tools, tests and benchmarks
Rules = dict[str, dict[str, list[str]]]  # user -> {"read": patterns, "write": patterns}


def read_acl(path: Path = ACL_FILE) -> Rules:
    """The users and their read/write topic patterns, from a Mosquitto ACL file."""
    rules: Rules = {}
    user = ""
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("topic") else raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0] == "user" and len(words) == 2:
            user = words[1]
            rules[user] = {"read": [], "write": []}
        elif words[0] == "topic" and user and len(words) in (2, 3):
            access, pattern = (words[1], words[2]) if len(words) == 3 else ("readwrite", words[1])
            if access not in ("read", "write", "readwrite"):
                raise ValueError(f"{path}:{number}: unknown access {access!r}")
            for kind in ("read", "write"):
                if kind in access:
                    rules[user][kind].append(pattern)
        else:
            raise ValueError(f"{path}:{number}: cannot read {raw!r}")
    return rules


def rules() -> Rules:
    return read_acl() | {ADMIN: {"read": ["#"], "write": ["#"]}}


def passwords_for(run_dir: Path | None) -> dict[str, str]:
    """Every role's password: those kept in ``run_dir`` (a restarted broker keeps its logins), else new ones
    (written there with mode 0600)."""
    path = run_dir / PASSWORDS_FILE if run_dir is not None else None
    if path is not None and path.exists():
        kept: dict[str, str] = json.loads(path.read_text())
        if set(kept) >= set(rules()):
            return kept
    made = {role: secrets.token_urlsafe(18) for role in rules()}
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")  # its own: two processes may write
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(made, file)
        temporary.replace(path)
    return made


def read_passwords(run_dir: Path) -> dict[str, str]:
    path = run_dir / PASSWORDS_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def login(url_host: str, port: int, role: str, password: str) -> str:
    return f"mqtt://{quote(role, safe='')}:{quote(password, safe='')}@{url_host}:{port}"


class RolePasswords(BaseAuthPlugin):  # type: ignore[misc]
    """Only the studio's role users, each with its password; no anonymous client."""

    @dataclass
    class Config:
        passwords: dict[str, str] = field(default_factory=dict)

    async def authenticate(self, *, session: Session) -> bool:
        expected = self.config.passwords.get(session.username or "")
        given = session.password or ""
        return expected is not None and hmac.compare_digest(expected.encode(), str(given).encode())


class RoleAcl(BaseTopicPlugin):  # type: ignore[misc]
    """Mosquitto's semantics: publish where the role may write; receive only what it may read."""

    @dataclass
    class Config:
        rules: Rules = field(default_factory=dict)

    async def topic_filtering(
        self, *, session: Session | None = None, topic: str | None = None, action: Action | None = None
    ) -> bool:
        role = self.config.rules.get((session.username if session else None) or "")
        if role is None or not topic:
            return False
        if action == Action.SUBSCRIBE:
            return True  # accepted; what it delivers is filtered per message (RECEIVE), as Mosquitto does
        patterns = role["write"] if action == Action.PUBLISH else role["read"]
        return any(topic_matches_sub(pattern, topic) for pattern in patterns)


class StudioBroker(Broker):  # type: ignore[misc]
    """amqtt with retained messages behind the ACL.

    amqtt 0.12 sends retained messages (a) on every CONNECT, for every topic filter that *any* client has
    subscribed to (``for topic in self._subscriptions`` in ``Broker.client_connected``), and (b) on SUBSCRIBE,
    without asking the topic plugins whether the subscriber may receive each one. So a client subscribed to
    nothing, or refused, still got other clients' retained views. Here a retained message goes only to a
    session that holds the filter itself, and only when its role may read the message's topic.
    """

    async def _publish_retained_messages_for_subscription(
        self, subscription: tuple[str, int], session: Session
    ) -> None:
        topic_filter, qos = subscription
        holders = self._subscriptions.get(topic_filter, [])
        if all(held.client_id != session.client_id for held, _ in holders):
            return  # (a): a filter of some other client's
        handler = self._get_handler(session)
        if handler is None:
            return
        for topic, retained in list(self._retained_messages.items()):
            if not self._matches(topic, topic_filter):
                continue
            if not await self._topic_filtering(session, topic=topic, action=Action.RECEIVE):
                continue  # (b)
            await handler.mqtt_publish(retained.topic, retained.data, min(qos, retained.qos or qos), retain=True)


def plugin_config(passwords: dict[str, str]) -> dict[str, Any]:
    return {
        f"{__name__}.RolePasswords": {"passwords": passwords},
        f"{__name__}.RoleAcl": {"rules": rules()},
    }
