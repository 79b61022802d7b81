"""Signed shoe messages: only the table's own shoe can deal.

A shoe daemon holds a per-shoe key (``studio shoe-key new``) and adds ``key_id`` and ``sig`` —
HMAC-SHA256 over the message's canonical JSON, every field but ``sig`` — to each card, new deck and
alarm it stamps. The controller accepts a message only if it is signed by a key it holds for that
shoe: broker ACLs say who may publish, the signature proves who did. A key file is one line,
``SHOE_ID KEY_ID SECRET_HEX``; the controller reads every ``*.key`` of its keys folder and reads the
folder again when it changes, so a new key can be added, the shoe restarted with it and the old key
removed without stopping the table (both are accepted in between).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.shoe.errors import ShoeError

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
RELOAD_S = 1.0  # the keys folder is looked at again at most this often


class KeyFileError(ShoeError, ValueError):
    """A key file that cannot be read."""

    code = "key_file"


@dataclass(frozen=True)
class ShoeKey:
    shoe_id: str
    key_id: str
    secret: bytes = b""

    def __repr__(self) -> str:  # never print a secret
        return f"ShoeKey({self.shoe_id!r}, {self.key_id!r})"

    def to_text(self) -> str:
        return f"{self.shoe_id} {self.key_id} {self.secret.hex()}\n"

    @classmethod
    def from_text(cls, text: str, where: str) -> ShoeKey:
        parts = text.split()
        if len(parts) != 3 or not _ID.match(parts[0]) or not _ID.match(parts[1]):
            raise KeyFileError(f"{where}: expected one line 'SHOE_ID KEY_ID SECRET_HEX'")
        try:
            secret = bytes.fromhex(parts[2])
        except ValueError:
            raise KeyFileError(f"{where}: the secret is not hexadecimal") from None
        if len(secret) < 16:
            raise KeyFileError(f"{where}: the secret is {len(secret)} bytes; at least 16")
        return cls(parts[0], parts[1], secret)

    @classmethod
    def load(cls, path: Path) -> ShoeKey:
        try:
            return cls.from_text(path.read_text(encoding="ascii"), str(path))
        except (OSError, UnicodeDecodeError) as error:
            raise KeyFileError(f"{path}: cannot read the key ({error})") from None


def new_key(shoe_id: str) -> ShoeKey:
    return ShoeKey(shoe_id, secrets.token_hex(4), secrets.token_bytes(32))


def write_key(directory: Path, key: ShoeKey) -> Path:
    """Write ``key`` to ``DIRECTORY/SHOE_ID.KEY_ID.key``, readable by its owner only."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key.shoe_id}.{key.key_id}.key"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(key.to_text())
    return path


def key_for(directory: Path, shoe_id: str) -> ShoeKey:
    """The shoe's key in ``directory`` (the newest if several), or a new one written there."""
    found = [key for key in KeyRing(directory).all() if key.shoe_id == shoe_id]
    return found[-1] if found else _written(directory, new_key(shoe_id))


def _written(directory: Path, key: ShoeKey) -> ShoeKey:
    write_key(directory, key)
    return key


def sign(payload: bytes, key: ShoeKey) -> bytes:
    """The JSON ``payload`` with ``key_id`` and ``sig`` added."""
    body = json.loads(payload)
    body["key_id"] = key.key_id
    body["sig"] = _mac(key.secret, body)
    return json.dumps(body, separators=(",", ":")).encode()


def check(payload: bytes, keys: Mapping[str, bytes]) -> str | None:
    """None when ``payload`` is signed by one of ``keys`` (key id → secret); else why it is not trusted."""
    try:
        body = json.loads(payload)
    except ValueError:
        return "not JSON"
    if not isinstance(body, dict):
        return "not a JSON object"
    key_id, sig = body.get("key_id"), body.get("sig")
    if not key_id or not sig:
        return "unsigned"
    secret = keys.get(str(key_id))
    if secret is None:
        return f"signed with a key this table does not hold ({str(key_id)[:64]!r})"
    if not isinstance(sig, str) or not hmac.compare_digest(sig, _mac(secret, body)):
        return "the signature does not match the message"
    return None


def _age(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile
        return 0.0


def _mac(secret: bytes, body: dict[str, Any]) -> str:
    canonical = json.dumps({k: v for k, v in body.items() if k != "sig"}, sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, canonical.encode(), hashlib.sha256).hexdigest()


class KeyRing:
    """The keys a controller accepts, by shoe: fixed ones, and the ``*.key`` files of a folder (re-read on change)."""

    def __init__(self, directory: Path | None = None, keys: list[ShoeKey] | None = None) -> None:
        self.directory = directory
        self._fixed = list(keys or [])
        self._loaded: list[ShoeKey] = []
        self._stamp: float | None = None
        self._looked_at = 0.0
        self._lock = threading.Lock()

    def keys_for(self, shoe_id: str) -> dict[str, bytes]:
        return {key.key_id: key.secret for key in self.all() if key.shoe_id == shoe_id}

    def all(self) -> list[ShoeKey]:
        with self._lock:
            self._reload()
            return [*self._fixed, *self._loaded]

    def _reload(self) -> None:
        if self.directory is None or time.monotonic() - self._looked_at < RELOAD_S:
            return
        self._looked_at = time.monotonic()
        try:
            stamp = self.directory.stat().st_mtime
        except OSError:
            self._loaded, self._stamp = [], None
            return
        if stamp == self._stamp:
            return
        self._stamp = stamp
        loaded = []
        for path in sorted(self.directory.glob("*.key"), key=_age):
            try:
                loaded.append(ShoeKey.load(path))
            except KeyFileError:
                continue  # a half-written or foreign file: the folder's other keys still count
        self._loaded = loaded
