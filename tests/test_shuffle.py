"""The committed server shuffle: what is published before the deal binds the deck; ``studio verify`` checks it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.cards import FULL_DECK
from services.games.shuffle import Shuffle, ShuffleError, verify

PUBLISHED = Path(__file__).resolve().parents[1] / "fixtures" / "shuffle" / "published.json"


def studio_verify(document: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", "verify", "-"], input=json.dumps(document), capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


def test_a_commitment_hashed_by_coreutils_is_verified() -> None:
    """The fixture's commitment was computed with ``sha256sum`` over "codes,…:salt", not by this code."""
    published = json.loads(PUBLISHED.read_text())
    shuffle = verify(published["commitment"], published["deck"], published["salt"])
    assert shuffle.commitment() == published["commitment"] and len(shuffle.deck) == 52


def test_a_new_shuffle_is_a_whole_deck_with_a_fresh_salt_and_checks_out() -> None:
    first, second = Shuffle.new(), Shuffle.new()
    assert sorted(map(str, first.deck)) == sorted(map(str, FULL_DECK)) and first.salt != second.salt
    assert len(first.salt) == 64 and first.deck != second.deck  # 1 in 52! to fail by chance
    revealed = first.revealed()
    assert verify(revealed["commitment"], revealed["deck"], revealed["salt"]) == first


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_change_to_the_deck_or_the_salt_is_caught(data: st.DataObject) -> None:
    shuffle = Shuffle.new()
    published = shuffle.revealed()
    deck = list(published["deck"])  # type: ignore[call-overload]
    i, j = data.draw(st.tuples(st.integers(0, 51), st.integers(0, 51)).filter(lambda pair: pair[0] != pair[1]))
    deck[i], deck[j] = deck[j], deck[i]  # two cards swapped: the dealer's favourite trick
    with pytest.raises(ShuffleError, match="not to the published commitment"):
        verify(published["commitment"], deck, published["salt"])
    salt = shuffle.salt[:-1] + ("0" if shuffle.salt[-1] != "0" else "1")
    with pytest.raises(ShuffleError, match="not to the published commitment"):
        verify(published["commitment"], published["deck"], salt)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"deck": ["AS"] * 52}, "each of the 52 cards once"),
        ({"deck": ["AS", "XX"]}, "invalid card code"),
        ({"deck": "AS,2S"}, "expected a list of 52 card codes"),
        ({"salt": "zz"}, "salt: expected 64 hex digits"),
        ({"commitment": "abc"}, "commitment: expected 64 hex digits"),
    ],
)
def test_a_malformed_publication_is_refused_naming_the_part(change: dict[str, object], message: str) -> None:
    published = json.loads(PUBLISHED.read_text()) | change
    with pytest.raises(ShuffleError, match=message):
        verify(published["commitment"], published["deck"], published["salt"])


def test_studio_verify_answers_each_document_and_exits_1_on_any_mismatch() -> None:
    published = json.loads(PUBLISHED.read_text())
    ok = studio_verify(published)
    assert ok.returncode == 0 and json.loads(ok.stdout) == {"verified": True, "commitment": published["commitment"]}
    tampered = published | {"deck": [published["deck"][1], published["deck"][0], *published["deck"][2:]]}
    both = studio_verify([published, tampered, {"deck": []}, {"commitment": 1, "extra": 2}])
    answers = json.loads(both.stdout)
    assert both.returncode == 1 and answers[0]["verified"] is True
    assert "not to the published commitment" in answers[1]["error"]
    assert "commitment: expected 64 hex digits" in answers[2]["error"]
    assert answers[3] == {"error": "unknown key 'extra' (expected commitment, deck, salt)"}
    broken = subprocess.run([sys.executable, "-m", "services.cli", "verify", "/nonexistent.json"],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert broken.returncode == 1 and broken.stderr.count("\n") == 1 and "cannot read" in broken.stderr
