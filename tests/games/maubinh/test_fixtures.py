"""Fixture tables score to their hand-checked results (the spec's worked examples and a whole four-player deal)."""

import json
from pathlib import Path

import pytest

from services.games.maubinh import score_to_dict

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "maubinh"
TABLES = sorted((FIXTURES / "tables").glob("*.json"))


def test_there_is_an_expected_result_for_every_table() -> None:
    assert len(TABLES) >= 10
    assert {path.name for path in TABLES} == {path.name for path in (FIXTURES / "expected").glob("*.json")}


@pytest.mark.parametrize("path", TABLES, ids=lambda path: path.stem)
def test_fixture_scores_to_its_expected_result(path: Path) -> None:
    expected = json.loads((FIXTURES / "expected" / path.name).read_text())
    result = score_to_dict(json.loads(path.read_text()))
    assert result == expected
    assert sum(result["players"].values()) == 0
