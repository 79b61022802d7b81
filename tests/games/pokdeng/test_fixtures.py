"""Fixture transcripts replay to their hand-derived expected results (also shown by `make demo`)."""

import json
from pathlib import Path

import pytest

from services.games.pokdeng.transcript import replay, result_to_dict

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "pokdeng"
TRANSCRIPTS = sorted((FIXTURES / "transcripts").glob("*.json"))


def test_there_are_fixtures_for_every_flow() -> None:
    assert len(TRANSCRIPTS) >= 10
    assert {path.name for path in TRANSCRIPTS} == {path.name for path in (FIXTURES / "expected").glob("*.json")}


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda path: path.stem)
def test_fixture_replays_to_its_expected_result(path: Path) -> None:
    expected = json.loads((FIXTURES / "expected" / path.name).read_text())
    assert result_to_dict(replay(json.loads(path.read_text()))) == expected
