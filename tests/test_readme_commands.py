"""Every ``studio …`` command line README.md and the pages under docs/ show is one the CLI accepts.

The command lines are taken from each page's code blocks (fenced and indented) and from its inline code that
starts with ``studio `` or ``.venv/bin/studio ``. The notation is expanded: ``[--opt X]`` is taken in (``[--card …]``,
a repetition, is left out), ``A | B`` and ``a|b|c`` give one command line per choice, and placeholders (``ROUND``,
``ID``, ``TOKEN``, ``…``, ``<…>``) become values the option's own type accepts. Each is then parsed by the real
parser (``services.cli.build_parser``); a mere mention of a (sub)command — ``studio controller`` — only has to name
one that exists.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from services.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # README.md and every page under docs/
PREFIXES = ("studio ", ".venv/bin/studio ")
PLACEHOLDERS = {"ROUND", "ID", "NAME", "FILE", "DIR", "TOKEN", "OP", "R", "V", "T", "S", "N", "M", "ISO", "INDEX"}
PLACEHOLDERS |= {"URL", "H", "P", "IPS"}  # a device URL, a host, a port, proxies
POSITIONALS = {"ROUND": "T1-1", "ID": "1", "INDEX": "0", "NAME": "ana", "FILE": "transcript.json", "DIR": "photos"}
CARDS = "AS KS QS JS TS 9H 9D 9C 2S 2H 3D 4C 5H".split()
VALUES = ("T1", "4", "2026-12-04T13:00:00Z", "0=2C")  # tried in turn against an option's type


@dataclass(frozen=True)
class Shown:
    line: int  # in its page
    text: str  # the command line as shown (continuation lines joined, white space collapsed)


def shown_commands(text: str) -> list[Shown]:
    """Every ``studio`` command line in ``text`` (a README or a page of docs/), in order."""
    found: list[Shown] = []
    prose: list[str] = []  # the lines outside code blocks (code lines blanked: line numbers stay)
    fenced = False
    pending: tuple[int, str] | None = None  # a fenced line continued with a backslash
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            prose.append("")
            continue
        if fenced:
            prose.append("")
            if pending is not None:
                start, head = pending
                pending = None
                stripped = head + " " + stripped
            else:
                start = number
            if stripped.endswith("\\"):
                pending = (start, stripped[:-1])
            elif stripped.startswith(PREFIXES):
                found.append(Shown(start, " ".join(stripped.split())))
            continue
        if line.startswith("    ") and stripped.startswith(PREFIXES):  # an indented code block
            found.append(Shown(number, " ".join(stripped.split())))
            prose.append("")
            continue
        prose.append(line)
    joined = "\n".join(prose)
    for match in re.finditer(r"`([^`]+)`", joined):
        span = " ".join(match.group(1).split())
        if span.startswith(PREFIXES) and "\n\n" not in match.group(1):
            found.append(Shown(joined.count("\n", 0, match.start()) + 1, span))
    return sorted(found, key=lambda shown: shown.line)


def variants(text: str) -> list[list[str]]:
    """The argument lists a shown command line stands for (without the leading ``studio``)."""
    tokens = shlex.split(text, comments=True)
    tokens = tokens[1:] if tokens and tokens[0].endswith("studio") else tokens
    tokens = _optional_groups(tokens)
    lists = [tokens]
    if "|" in tokens:  # ``--round R | --since T``: the option group on either side, one at a time
        bar = tokens.index("|")
        left = max(i for i in range(bar) if tokens[i].startswith("-"))
        right = next((i for i in range(bar + 2, len(tokens)) if tokens[i].startswith("-")), len(tokens))
        lists = [tokens[:bar] + tokens[right:], tokens[:left] + tokens[bar + 1 :]]
    expanded: list[list[str]] = []
    for argv in lists:
        choices = [token.split("|") if "|" in token and not token.startswith("-") else [token] for token in argv]
        combinations: list[list[str]] = [[]]
        for options in choices:
            combinations = [[*done, option] for done in combinations for option in options]
        expanded.extend(combinations)
    return expanded


def _optional_groups(tokens: list[str]) -> list[str]:
    """``[--opt X]`` taken in, ``[--opt …]`` (a repetition of what is shown before it) left out."""
    kept: list[str] = []
    group: list[str] | None = None
    for token in tokens:
        if group is None and token.startswith("["):
            group, token = [], token[1:]
        if group is None:
            kept.append(token)
            continue
        closing = token.endswith("]")
        group.append(token[:-1] if closing else token)
        if closing:
            if not any("…" in part for part in group):
                kept.extend(group)
            group = None
    assert group is None, f"an unclosed [ in {tokens}"
    return kept


@cache
def parser() -> argparse.ArgumentParser:
    return build_parser()


def _subcommands(node: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in node._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def refusal(argv: list[str]) -> str | None:
    """Why the CLI refuses ``argv`` with its placeholders filled in, or None when it accepts it."""
    node, depth = parser(), 0
    while depth < len(argv) and argv[depth] in _subcommands(node):
        node = _subcommands(node)[argv[depth]]
        depth += 1
    if depth == len(argv) and depth > 0:
        return None  # a mention of an existing (sub)command, not a command line
    filled: list[str] = []
    for index, token in enumerate(argv):
        if token == "CARD×13":
            filled.extend(CARDS)
        elif token in PLACEHOLDERS or "…" in token or re.fullmatch(r"<.*>", token):
            option = argv[index - 1] if index > 0 and argv[index - 1].startswith("-") else None
            action = node._option_string_actions.get(option) if option else None
            filled.append(_value(action) if action else POSITIONALS.get(token, "x"))
        else:
            filled.append(token)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            parser().parse_args(filled)
    except SystemExit as exit_:
        if exit_.code not in (0, None):  # --help: accepted
            return f"{' '.join(filled)!r} → {err.getvalue().strip() or exit_.code}"
    return None


def _value(action: argparse.Action) -> str:
    """A value ``action`` accepts: its first choice, else the first of VALUES its type takes."""
    if action.choices:
        return str(next(iter(action.choices)))
    for value in VALUES:
        if action.type is None or not callable(action.type):
            return value
        try:
            action.type(value)
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
        return value
    return VALUES[0]


SHOWN = [
    (str(page.relative_to(ROOT)), shown) for page in PAGES for shown in shown_commands(page.read_text(encoding="utf-8"))
]


def test_the_pages_show_many_commands() -> None:
    assert len(SHOWN) >= 60, SHOWN
    assert any(shown.text.startswith(".venv/bin/studio ") for page, shown in SHOWN if page == "README.md")
    assert any("ops void" in shown.text for _page, shown in SHOWN)
    pages = {page for page, _shown in SHOWN}
    assert {"README.md", "docs/operator.md", "docs/games.md", "docs/hardware.md", "docs/deployment.md"} <= pages


@pytest.mark.parametrize(("page", "shown"), SHOWN, ids=[f"{page}:{shown.line}" for page, shown in SHOWN])
def test_shown_command_parses(page: str, shown: Shown) -> None:
    for argv in variants(shown.text):
        why = refusal(argv)
        assert why is None, f"{page} line {shown.line} shows `{shown.text}`, which the CLI refuses: {why}"


def test_the_check_catches_a_wrong_command_line() -> None:
    text = """intro `studio ops void ROUND --reason R --as OP` and

```sh
.venv/bin/studio shoe --table T1 \\
    --device 'sim://serial' --bogus   # comment
```

    .venv/bin/studio wallet reconcile --round R | --since T [--json]
"""
    shown = shown_commands(text)
    assert [(item.line, item.text) for item in shown] == [
        (1, "studio ops void ROUND --reason R --as OP"),
        (4, ".venv/bin/studio shoe --table T1 --device 'sim://serial' --bogus # comment"),
        (8, ".venv/bin/studio wallet reconcile --round R | --since T [--json]"),
    ]
    void, shoe, reconcile = (variants(item.text) for item in shown)
    assert "unrecognized arguments: --as" in str(refusal(void[0]))
    assert "unrecognized arguments: --bogus" in str(refusal(shoe[0]))
    assert reconcile == [
        ["wallet", "reconcile", "--round", "R", "--json"],
        ["wallet", "reconcile", "--since", "T", "--json"],
    ]
    assert all(refusal(argv) is None for argv in reconcile)
    assert variants("studio ops rounds|show [--card …] [--json]") == [
        ["ops", "rounds", "--json"],
        ["ops", "show", "--json"],
    ]
    assert refusal(["ops", "show"]) is None and refusal(["controller"]) is None  # mentions
    assert "invalid choice: 'nonsense'" in str(refusal(["ops", "nonsense"]))
