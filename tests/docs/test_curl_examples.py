"""The integrator's guide's ``curl`` examples run, in order, against a live studio and answer as the guide shows.

Each ```sh block of ``docs/integrator.md`` that starts with ``curl`` is one example; the fenced ```text block after
it is its answer: ``HTTP <status>`` then the body. A JSON body is compared as the guide says to read it: the fields
shown must be there with the values shown (more fields may come), ``"…"`` is any value, a list ending in ``"…"`` may
go on, and ``"$NAME"`` is a value kept for the later examples (compared once it is known). A stream's body is its
frames, ``id:`` and ``data:`` lines, the data compared the same way. The examples run through the shell with
``STUDIO`` and ``OPERATOR_TOKEN`` (and what earlier answers gave) in its environment; an example that only reads
(no ``-X``, no ``-d``) is run again until it answers as shown, as the guide tells its reader to.

The studio is the production assembly of ``studio up`` (embedded broker on a free port, SQLite, API on a free port,
controller, a simulated shoe and dealer) with one Pok Deng table ``T1`` of the house's settings.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from services.rounds.returns import HOUSE_SETTINGS
from services.studio.assembly import RunningStudio, StudioConfig, running_studio

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "integrator.md"
ANY = "…"
STATUS = "\n@@status "  # appended by curl's --write-out after the body
RETRY_S = 15.0  # how long a read is tried again until it answers as shown
WINDOWS = {"betting_window_ms": 60_000, "insurance_window_ms": 1_000, "decision_window_ms": 1_000}


@dataclass(frozen=True)
class Example:
    line: int  # of the command in the guide
    command: str
    status: int
    body: str


def examples(text: str) -> list[Example]:
    """The guide's ``curl`` examples with their answers, in order."""
    blocks = [(text.count("\n", 0, m.start()) + 1, m[1], m[2]) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)]
    found = []
    for index, (line, language, content) in enumerate(blocks):
        if language != "sh" or not content.startswith("curl "):
            continue
        answer = blocks[index + 1] if index + 1 < len(blocks) else None
        assert answer is not None and answer[1] == "text", f"integrator.md line {line}: no ```text answer follows"
        head, _, body = answer[2].partition("\n")
        assert re.fullmatch(r"HTTP \d{3}", head), f"integrator.md line {answer[0]}: the answer starts {head!r}"
        found.append(Example(line, content.replace("\\\n", " ").strip(), int(head.split()[1]), body.strip()))
    return found


def matches(shown: Any, actual: Any, kept: dict[str, str], path: str = "") -> str | None:
    """Why ``actual`` is not what ``shown`` shows (None when it is); ``$NAME`` values are kept in ``kept``."""
    if shown == ANY:
        return None
    if isinstance(shown, str) and shown.startswith("$"):
        name = shown[1:]
        if name in kept and kept[name] != actual:
            return f"{path}: {actual!r}, not ${name} = {kept[name]!r}"
        kept.setdefault(name, actual)
        return None
    if isinstance(shown, dict):
        if not isinstance(actual, dict):
            return f"{path}: {actual!r} is not an object"
        for key, value in shown.items():
            if key not in actual:
                return f"{path}.{key}: missing"
            why = matches(value, actual[key], kept, f"{path}.{key}")
            if why:
                return why
        return None
    if isinstance(shown, list):
        if not isinstance(actual, list):
            return f"{path}: {actual!r} is not a list"
        more = bool(shown) and shown[-1] == ANY
        items = shown[:-1] if more else shown
        if len(actual) < len(items) or (not more and len(actual) != len(items)):
            return f"{path}: {len(actual)} items, the guide shows {len(items)}{' or more' if more else ''}"
        for index, value in enumerate(items):
            why = matches(value, actual[index], kept, f"{path}[{index}]")
            if why:
                return why
        return None
    return None if shown == actual else f"{path}: {actual!r}, the guide shows {shown!r}"


def body_matches(shown: str, actual: str, kept: dict[str, str]) -> str | None:
    if shown.startswith(("id:", "data:")):  # a stream: its frames, each an id and its data
        return matches(frames(shown), frames(actual), kept, "frames")
    try:
        value = json.loads(actual)
    except ValueError:
        return f"not JSON: {actual[:200]!r}"
    return matches(json.loads(shown), value, kept)


def frames(text: str) -> list[dict[str, Any]]:
    parsed = []
    for frame in re.split(r"\n\s*\n", text.strip()):
        fields = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line and not line.startswith(":"))
        if fields:
            parsed.append({"id": fields.get("id"), "data": json.loads(fields["data"]) if "data" in fields else None})
    return parsed


def run(example: Example, env: dict[str, str]) -> tuple[int, str]:
    command = example.command + " --max-time 10 --write-out '" + STATUS.replace("\n", "\\n") + "%{http_code}'"
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=20)
    body, _, status = done.stdout.rpartition(STATUS.strip("\n"))
    return int(status or 0), body.strip()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[RunningStudio]:
    config = StudioConfig(
        tables=("T1",), run_dir=tmp_path, table_settings=HOUSE_SETTINGS | WINDOWS, result_pause_ms=60_000,
        dealer_pace=0.02,
    )  # fmt: skip
    with running_studio(config) as studio:
        yield studio


def test_the_guide_has_curl_examples_with_answers() -> None:
    found = examples(GUIDE.read_text(encoding="utf-8"))
    assert len(found) >= 20
    assert {example.status for example in found} >= {200, 201, 401, 403, 404, 409, 422}
    assert any("Last-Event-ID" in example.command for example in found)
    assert all("|" not in example.command.replace("\\|", "") for example in found), "one command, no pipes"


def test_the_matching_follows_the_guides_reading() -> None:
    kept: dict[str, str] = {}
    assert matches({"a": "$X", "b": [1, ANY]}, {"a": "v", "b": [1, 2, 3], "c": 0}, kept) is None
    assert kept == {"X": "v"}
    assert matches({"a": "$X"}, {"a": "w"}, kept) == ".a: 'w', not $X = 'v'"
    assert matches({"b": [1]}, {"b": [1, 2]}, kept) == ".b: 2 items, the guide shows 1"
    assert matches({"c": 1}, {}, kept) == ".c: missing"
    stream = 'id: 5.1\ndata: {"phase": "betting", "x": 1}\n\n'
    assert body_matches('id: $ID\ndata: {"phase": "betting"}', stream, kept) is None and kept["ID"] == "5.1"


def test_every_curl_example_answers_as_the_guide_shows(live: RunningStudio) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the guide's examples need it (apt-get install -y curl)")
    operator = live.players.register("boss", "operator")
    kept: dict[str, str] = {"STUDIO": live.api_url, "OPERATOR_TOKEN": operator}
    for example in examples(GUIDE.read_text(encoding="utf-8")):
        reads = " -X " not in f" {example.command} " and " -d " not in f" {example.command} "
        deadline = time.monotonic() + (RETRY_S if reads else 0)
        while True:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")} | kept
            trial = dict(kept)
            status, body = run(example, env)
            why = (
                f"HTTP {status}, the guide shows {example.status}"
                if status != example.status
                else body_matches(example.body, body, trial)
            )
            if why is None:
                kept = trial
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"integrator.md line {example.line}: `{example.command}`\n  {why}\n  answered: {body[:600]}"
                )
            time.sleep(0.2)
