"""Stopping a benchmark's child process: ask with a signal, kill it if it does not listen."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any], signum: int = signal.SIGTERM, timeout: float = 30) -> int:
    """Send ``signum``, wait ``timeout`` s, then SIGKILL; the exit status."""
    if process.poll() is None:
        process.send_signal(signum)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    return process.returncode
