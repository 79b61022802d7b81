"""Signed shoe messages: what the controller trusts, and keys changed without stopping the table."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from services.bus.messages import ShoeCard, decode_shoe_event, encode
from services.shoe import signing
from services.shoe.signing import KeyFileError, KeyRing, ShoeKey, check, key_for, new_key, sign, write_key

CARD = ShoeCard(
    shoe_id="T1-shoe", boot_id="b1", seq=7, ts="2026-12-03T18:00:00+00:00", video_tc="18:00:00:00", deck=0,
    card="AS", source="serial", confidence=0.97, raw="AS",
)  # fmt: skip


def test_a_signed_message_checks_with_its_key_and_still_decodes() -> None:
    key = new_key("T1-shoe")
    payload = sign(encode(CARD), key)
    assert check(payload, {key.key_id: key.secret}) is None
    assert decode_shoe_event(payload).card == "AS"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda body: body | {"card": "KD"}, "the signature does not match the message"),
        (lambda body: body | {"seq": 8}, "the signature does not match the message"),
        (lambda body: {k: v for k, v in body.items() if k != "sig"}, "unsigned"),
        (lambda body: body | {"key_id": "other"}, "signed with a key this table does not hold ('other')"),
        (lambda body: body | {"sig": 7}, "the signature does not match the message"),
    ],
)
def test_what_is_not_trusted(change: object, why: str) -> None:
    key = new_key("T1-shoe")
    body = json.loads(sign(encode(CARD), key))
    payload = json.dumps(change(body)).encode()  # type: ignore[operator]
    assert check(payload, {key.key_id: key.secret}) == why


def test_another_secret_under_the_same_key_id_is_refused() -> None:
    key = new_key("T1-shoe")
    thief = ShoeKey("T1-shoe", key.key_id, os.urandom(32))
    assert check(sign(encode(CARD), thief), {key.key_id: key.secret}) == "the signature does not match the message"


def test_a_key_file_is_private_and_reads_back(tmp_path: Path) -> None:
    key = new_key("T1-shoe")
    path = write_key(tmp_path, key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ShoeKey.load(path) == key and "secret" not in repr(key) and key.secret.hex() not in repr(key)
    with pytest.raises(FileExistsError):
        write_key(tmp_path, key)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected one line 'SHOE_ID KEY_ID SECRET_HEX'"),
        ("T1-shoe k1 zz", "the secret is not hexadecimal"),
        ("T1-shoe k1 abcd", "the secret is 2 bytes; at least 16"),
        ("T/1 k1 " + "00" * 32, "expected one line"),
    ],
)
def test_bad_key_files_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.key"
    path.write_text(text)
    with pytest.raises(KeyFileError, match=message):
        ShoeKey.load(path)


def test_keys_are_rotated_without_stopping_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signing, "RELOAD_S", 0.0)
    ring = KeyRing(tmp_path)
    old = new_key("T1-shoe")
    write_key(tmp_path, old)
    assert set(ring.keys_for("T1-shoe")) == {old.key_id}
    time.sleep(0.01)  # a new mtime for the folder
    new = new_key("T1-shoe")
    write_key(tmp_path, new)
    assert set(ring.keys_for("T1-shoe")) == {old.key_id, new.key_id}, "both during the change"
    (tmp_path / f"T1-shoe.{old.key_id}.key").unlink()
    time.sleep(0.01)
    assert set(ring.keys_for("T1-shoe")) == {new.key_id}
    assert ring.keys_for("T2-shoe") == {}
    (tmp_path / "junk.key").write_text("not a key")
    time.sleep(0.01)
    assert set(ring.keys_for("T1-shoe")) == {new.key_id}, "a broken file does not hide the others"


def test_the_studio_reuses_a_shoes_key(tmp_path: Path) -> None:
    first = key_for(tmp_path, "T1-shoe")
    assert key_for(tmp_path, "T1-shoe") == first
    assert key_for(tmp_path, "T2-shoe") != first


def test_studio_shoe_key_new_writes_a_key_the_shoe_and_the_controller_read(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "services.cli", "shoe-key", "new", "--shoe-id", "T9-shoe", "--dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60)
    answer = json.loads(done.stdout)
    assert ShoeKey.load(Path(answer["file"])).key_id == answer["key_id"]
    assert set(KeyRing(tmp_path).keys_for("T9-shoe")) == {answer["key_id"]}
