"""Run many ``studio`` command lines as processes forked from one that has loaded the CLI once.

    python -m tests.forked_cli < cases.json > answers.json

``cases.json``: a list of ``{"argv": [...], "cwd": "..."}``; the answer: a list of ``[status, stdout, stderr]`` in
the same order. Each command line runs in its own process, as ``python -m services.cli ARGV`` would (the exit status
and the output are the process's own, an uncaught exception prints its traceback as the interpreter does), but
without importing the whole stack again for each: the CLI's bad-argument test runs 70 command lines, and a cold start
costs 1–2.5 s of CPU each.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

from services.cli import build_parser, main

TIMEOUT_S = 60.0
AT_ONCE = 4


def _child(argv: list[str], cwd: str, out: int, err: int) -> None:
    """In the forked process: run the command line, exit with its status (never returns)."""
    status = 1
    try:
        os.chdir(cwd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.argv = ["studio", *argv]
        status = main(argv)
    except SystemExit as done:  # argparse's refusals, and sys.exit, as the interpreter reads them
        if done.code is None or isinstance(done.code, int):
            status = done.code or 0
        else:
            print(done.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more can be said
                stream.flush()
        os._exit(status)


def run(cases: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    answers: dict[int, tuple[int, str, str]] = {}
    pending = list(enumerate(cases))
    running: dict[int, tuple[int, float, Any, Any]] = {}  # pid: (case, started, stdout file, stderr file)
    while pending or running:
        while pending and len(running) < AT_ONCE:
            index, case = pending.pop(0)
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115 - closed once read
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(list(case["argv"]), str(case["cwd"]), out.fileno(), err.fileno())
            running[pid] = (index, time.monotonic(), out, err)
        pid, wait_status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for late, (_index, started, _out, _err) in running.items():
                if time.monotonic() - started > TIMEOUT_S:
                    os.kill(late, signal.SIGKILL)
            time.sleep(0.005)
            continue
        index, _started, out, err = running.pop(pid)
        texts = []
        for file in (out, err):
            file.seek(0)
            texts.append(file.read().decode(errors="replace"))
            file.close()
        answers[index] = (os.waitstatus_to_exitcode(wait_status), texts[0], texts[1])
    return [answers[index] for index in range(len(cases))]


if __name__ == "__main__":
    build_parser()  # every command's module loaded here, once, before the forks
    json.dump(run(json.load(sys.stdin)), sys.stdout)
