"""Fixture transcripts replay to their hand-checked results (worked examples of the spec, and one whole round)."""

import json
from pathlib import Path

import pytest

from services.games.tienlen.transcript import replay_to_dict

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "tienlen"
TRANSCRIPTS = sorted((FIXTURES / "transcripts").glob("*.json"))


def test_there_is_an_expected_result_for_every_transcript() -> None:
    assert len(TRANSCRIPTS) >= 12
    assert {path.name for path in TRANSCRIPTS} == {path.name for path in (FIXTURES / "expected").glob("*.json")}


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda path: path.stem)
def test_fixture_replays_to_its_expected_result(path: Path) -> None:
    expected = json.loads((FIXTURES / "expected" / path.name).read_text())
    result = replay_to_dict(json.loads(path.read_text()))
    assert result == expected
    if "payments" in result:
        assert sum(result["payments"].values()) == 0
