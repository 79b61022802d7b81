"""The README's examples are executable: its doctest runs and its transcript example replays as shown."""

import doctest
import json
import re
from pathlib import Path

from services.games.pokdeng.transcript import replay, result_to_dict

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run() -> None:
    failures, attempted = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert attempted >= 4
    assert failures == 0


def test_readme_transcript_example_gives_the_readme_result() -> None:
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(), flags=re.S)
    transcript, shown = json.loads(blocks[0]), json.loads(blocks[1])
    result = result_to_dict(replay(transcript))
    for key in ("outcomes", "wagers", "insurance", "players"):
        assert result[key] == shown[key]
    assert result["hands"]["A"] == shown["hands"]["A"]
    assert set(README.read_text().split("```sh\n")[1].split("```")[0].split("#")[0].split()) >= {"make", "demo"}
