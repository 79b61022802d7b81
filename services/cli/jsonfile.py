"""Reading a JSON document from a path or stdin, with one-line errors for the CLIs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


class JsonFileError(ValueError):
    """A file that cannot be read or is not JSON; the message names the file and the problem."""


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
