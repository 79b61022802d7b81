"""``studio up``: the whole studio until stopped, printing URLs that work."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def test_studio_up_prints_working_urls_for_the_api_console_overlay_and_broker_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("STUDIO_MQTT_URL", "STUDIO_DATABASE_URL")}
    command = [sys.executable, "-m", "services.cli", "up", "--api-port", "0", "--tables", "U1", "--run-dir", "run"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while not any("console token" in line for line in lines) and time.monotonic() < deadline:
            lines.append(process.stdout.readline())
        out = "".join(lines)
        pattern = r"^\s+(API|U1 dealer console|U1 overlay|U1 player's page|broker)\s+(\S+)"
        urls = dict(re.findall(pattern, out, re.MULTILINE))
        assert set(urls) == {"API", "U1 dealer console", "U1 overlay", "U1 player's page", "broker"}, out
        assert urls["broker"].startswith("mqtt://127.0.0.1:") and not urls["broker"].endswith(":1883")
        public = re.search(r"read-only public feed: (mqtt://public:[^@\s]+@127\.0\.0\.1:\d+)", out)
        assert public is not None and public.group(1).endswith(urls["broker"].rsplit(":", 1)[1]), out
        assert (tmp_path / "run" / "broker.url").read_text().strip() == urls["broker"]
        with urllib.request.urlopen(f"{urls['API']}/v1/tables") as response:
            assert [t["table_id"] for t in json.loads(response.read())] == ["U1"]
        for page in ("U1 dealer console", "U1 overlay", "U1 player's page"):
            with urllib.request.urlopen(urls[page]) as response:
                assert response.status == 200 and b"/static/studio.js" in response.read()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
