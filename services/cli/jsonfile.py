"""Reading a JSON document from a path or stdin, with one-line errors for the CLIs."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


class JsonFileError(ValueError):
    """A file that cannot be read or is not JSON; the message names the file and the problem."""

    code = "bad_json_file"


def load(path: str) -> Any:
    """Parse the JSON in ``path`` (``-`` reads stdin)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise JsonFileError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise JsonFileError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise JsonFileError(f"{path}: not valid JSON: {error}") from None
    except RecursionError:
        raise JsonFileError(f"{path}: JSON nested too deeply") from None


def mirror(path: str, prog: str, answer: Callable[[Any], dict[str, Any]]) -> int:
    """Answer the document in ``path`` — one object, or each of a list, the output mirroring it — as JSON.

    ``answer`` gives a result or ``{"error": …}``; the exit status is 1 if any answer is an error (or the
    file cannot be read, said in one line on stderr), else 0.
    """
    try:
        document = load(path)
    except JsonFileError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 1
    answers = [answer(item) for item in document] if isinstance(document, list) else [answer(document)]
    json.dump(answers if isinstance(document, list) else answers[0], sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 1 if any("error" in item for item in answers) else 0
