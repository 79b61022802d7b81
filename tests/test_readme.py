"""The examples of README.md and docs/ are executable: their doctests run, the transcript example replays as shown."""

import doctest
import json
import re
from pathlib import Path

from services.games.pokdeng.transcript import replay, result_to_dict

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]  # README.md and every page under docs/


def test_readme_and_docs_python_examples_run() -> None:
    attempted_in: dict[str, int] = {}
    for page in PAGES:
        failures, attempted = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
        assert failures == 0, f"{page.relative_to(ROOT)}: {failures} of its examples failed"
        attempted_in[str(page.relative_to(ROOT))] = attempted
    assert sum(attempted_in.values()) >= 10, attempted_in
    assert attempted_in["docs/games.md"] >= 10  # the Pok Deng, Tiến Lên and Mậu Binh engines


def test_the_transcript_example_gives_the_result_shown() -> None:
    text = (ROOT / "docs" / "games.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    transcript, shown = json.loads(blocks[0]), json.loads(blocks[1])
    assert {"cards", "decisions", "wagers"} <= set(transcript)
    result = result_to_dict(replay(transcript))
    for key in ("outcomes", "wagers", "insurance", "players"):
        assert result[key] == shown[key]
    assert result["hands"]["A"] == shown["hands"]["A"]


def test_the_readme_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first = text.split("```sh\n")[1].split("```")[0]
    assert set(first.split("#")[0].split()) >= {"make", "demo"}
    assert "make test" in first
    assert len(text.splitlines()) < 250
