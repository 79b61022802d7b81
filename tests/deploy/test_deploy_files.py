"""The deploy files, checked: the systemd units pass ``systemd-analyze verify``, every ``studio`` command line in the
units and the compose file is one the CLI accepts, and the proxy's configuration is one HAProxy accepts (the topology
test, ``tests/topology/``, runs that very file)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client import REGISTRY

import services.observability.metrics  # noqa: F401  (registers the studio's metrics)
from services.cli import build_parser

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
INSTANCES = {"studio-controller@": "T1\\x2cT2", "studio-shoe@": "T1", "studio-camera@": "T1"}  # T1,T2 escaped
# what the units' environment files hold, in the shapes studio.env.example and the units' comments give
ENVIRONMENT = {
    "STUDIO_MQTT_URL_CONTROLLER": "mqtt://controller:secret@127.0.0.1:1883",
    "STUDIO_MQTT_URL_SHOE": "mqtt://shoe:secret@127.0.0.1:1883",
    "SHOE_DEVICE": "serial:///dev/ttyUSB0?dialect=monitor",
    "CAMERA_DEVICE": "camera://0",
    "CAMERA_KEY": "/var/lib/studio/.studio/keys/T1-camera.k1.key",
    "MQTT_API_PASSWORD": "secret",
    "SHOE_METRICS_PORT": "9201",
    "CAMERA_METRICS_PORT": "9301",
}


def required(tool: str) -> str:
    """The tool's path; skipped without it (CI, ``STUDIO_REQUIRE_TOPOLOGY=1``, installs it and fails without it)."""
    found = shutil.which(tool) or next((p for p in (f"/usr/sbin/{tool}", f"/usr/bin/{tool}") if Path(p).exists()), None)
    if found is None:
        if os.environ.get("STUDIO_REQUIRE_TOPOLOGY"):
            pytest.fail(f"needs {tool}")
        pytest.skip(f"needs {tool}")
    return found


def unit_name(unit: Path) -> str:
    stem = unit.name.removesuffix(".service")
    return f"{stem}{INSTANCES[stem]}.service" if stem in INSTANCES else unit.name


def test_every_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    """Each unit (each template with an instance) verified in a root that holds what it names: the studio's command
    where the units expect it, the environment files, the system's own units."""
    analyze = required("systemd-analyze")
    system_units = next(p for p in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")) if p.exists())
    root = tmp_path / "root"
    shutil.copytree(system_units, root / "usr/lib/systemd/system", symlinks=True)
    for unit in UNITS:
        (root / "etc/systemd/system").mkdir(parents=True, exist_ok=True)
        shutil.copy(unit, root / "etc/systemd/system" / unit.name)
    studio = root / "opt/studio/.venv/bin/studio"
    studio.parent.mkdir(parents=True)
    studio.write_text("#!/bin/sh\n")
    studio.chmod(0o755)
    (root / "etc/studio").mkdir()
    for env in ("studio.env", "shoe-T1.env", "camera-T1.env"):
        (root / "etc/studio" / env).write_text((DEPLOY / "systemd" / "studio.env.example").read_text())
    (root / "var/lib/studio").mkdir(parents=True)
    assert len(UNITS) >= 4
    for unit in UNITS:
        done = subprocess.run([analyze, "verify", f"--root={root}", unit_name(unit)], capture_output=True, text=True)
        said = (done.stdout + done.stderr).strip()
        assert done.returncode == 0 and not said, f"{unit.name}: {said}"


def studio_command_lines() -> list[tuple[str, list[str]]]:
    """Every ``studio …`` command line of the units and the compose file, as (where, arguments)."""
    lines: list[tuple[str, list[str]]] = []
    for unit in UNITS:
        for line in unit.read_text().splitlines():
            if line.startswith("ExecStart="):
                command = line.removeprefix("ExecStart=").replace("%i", "T1")
                lines.append((unit.name, shlex.split(expanded(command))[1:]))
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    for name, service in compose["services"].items():
        command = service.get("command")
        if not command:
            continue
        text = expanded(command if isinstance(command, str) else shlex.join(command))
        inner = re.fullmatch(r"sh -c '(.*)'", text, flags=re.DOTALL)
        for part in re.split(r"&&|\|\||;", inner.group(1) if inner else text):
            words = shlex.split(part.replace("$$(ls /data/keys/T1-shoe.*.key | head -n 1)", "/data/keys/T1.k.key"))
            words = words[1:] if words[:1] == ["exec"] else words
            if words[:1] == ["studio"]:
                lines.append((f"compose.yaml {name}", words[1:]))
    return lines


def expanded(text: str) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda match: ENVIRONMENT[match.group(1)], text)


def test_every_studio_command_line_in_the_deploy_files_is_one_the_cli_accepts() -> None:
    lines = studio_command_lines()
    assert {arguments[0] for _where, arguments in lines} >= {"api", "controller", "shoe", "shoe-key"}
    for where, arguments in lines:
        try:
            build_parser(arguments[0]).parse_args(arguments)
        except SystemExit as refused:
            pytest.fail(f"{where}: studio {shlex.join(arguments)} is refused (exit {refused.code})")


def test_the_proxy_configuration_is_one_haproxy_accepts() -> None:
    haproxy = required("haproxy")
    env = os.environ | {
        "STUDIO_PROXY_BIND": "127.0.0.1:8080", "STUDIO_API_1": "127.0.0.1:8001", "STUDIO_API_2": "127.0.0.1:8002"
    }  # fmt: skip
    done = subprocess.run(
        [haproxy, "-c", "-f", str(DEPLOY / "haproxy" / "haproxy.cfg")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_prometheus_accepts_the_deployed_configuration_and_alert_rules() -> None:
    promtool = required("promtool")
    for check, name in (("config", "prometheus.yml"), ("rules", "alerts.yml")):
        done = subprocess.run(
            [promtool, "check", check, name], cwd=DEPLOY / "prometheus", capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_alerts_and_the_dashboard_read_only_metrics_the_studio_exports() -> None:
    exported: set[str] = set()
    for family in REGISTRY.collect():
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}.get(family.type, ("",))
        exported |= {family.name + suffix for suffix in suffixes}
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"][0]["rules"]
    dashboard = json.loads((DEPLOY / "grafana" / "studio.json").read_text())
    queries = [rule["expr"] for rule in rules] + [
        target["expr"] for panel in dashboard["panels"] for target in panel["targets"]
    ]
    assert len(rules) >= 7 and len(dashboard["panels"]) >= 15
    for query in queries:
        named = set(re.findall(r"\bstudio_\w+", query))  # up and ALERTS are Prometheus's own
        assert named <= exported, f"{query}: {sorted(named - exported)} not exported by the studio"
    jobs = {job["job_name"] for job in yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())[
        "scrape_configs"]}  # fmt: skip
    assert jobs == {"studio-api", "studio-controller", "studio-shoe", "studio-camera"}
