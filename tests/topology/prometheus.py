"""A real Prometheus for the topology test, on ``deploy/prometheus``'s own configuration and alert rules.

The scrape jobs keep their names with this run's targets; every second a scrape and an evaluation (the deploy's
5 s would only slow the test); the rules are the deployed ones with their ``for:`` patience taken out, so an alert
fires at the first evaluation that sees its fault — the expressions are exactly those deployed.
"""

from __future__ import annotations

import json
import math
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import yaml

DEPLOYED = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def alert_names() -> set[str]:
    return {rule["alert"] for group in rules()["groups"] for rule in group["rules"]}


def rules() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOYED / "alerts.yml").read_text())
    return loaded


def configure(folder: Path, targets: dict[str, list[str]]) -> Path:
    """The deployed configuration with this run's ``targets`` by job (a job not given is left out); its path."""
    impatient = rules()
    for group in impatient["groups"]:
        for rule in group["rules"]:
            rule.pop("for", None)
    (folder / "alerts.yml").write_text(yaml.safe_dump(impatient))
    config = yaml.safe_load((DEPLOYED / "prometheus.yml").read_text())
    config["global"] |= {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(folder / "alerts.yml")]
    jobs = [job for job in config["scrape_configs"] if job["job_name"] in targets]
    assert {job["job_name"] for job in jobs} == set(targets), "a job the test scrapes is not in the deployed config"
    for job in jobs:
        labels = job["static_configs"][0].get("labels", {})
        job["static_configs"] = [{"targets": targets[job["job_name"]], "labels": labels}]
    config["scrape_configs"] = jobs
    path = folder / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def command(config: Path, port: int) -> list[str]:
    binary = shutil.which("prometheus") or "/usr/bin/prometheus"
    storage = config.parent / "tsdb"
    listen = f"--web.listen-address=127.0.0.1:{port}"
    return [binary, f"--config.file={config}", f"--storage.tsdb.path={storage}", listen]


class Prometheus:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def query(self, promql: str, at: float | None = None) -> list[dict[str, Any]]:
        arguments = {"query": promql} | ({"time": f"{at:.3f}"} if at is not None else {})
        with urllib.request.urlopen(f"{self.base}/api/v1/query?{urlencode(arguments)}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/-/ready", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def fired(self, alert: str, since: float, until: float | None = None, **labels: str) -> bool:
        """Whether ``alert`` (with ``labels``) was firing at any evaluation between ``since`` and ``until`` (now)."""
        until = time.time() if until is None else until
        window = max(1, math.ceil(until - since))
        matchers = [f'alertname="{alert}"', 'alertstate="firing"', *(f'{k}="{v}"' for k, v in labels.items())]
        return bool(self.query(f"max_over_time(ALERTS{{{','.join(matchers)}}}[{window}s])", at=until))

    def sustained(self) -> set[str]:
        """The alerts firing at 5 or more of the last 6 evaluations (the rules here have no ``for:`` to wait out a
        blip: a gauge caught for one scrape mid-change is not a fault)."""
        query = 'count_over_time(ALERTS{alertstate="firing"}[6s]) >= 5'
        return {series["metric"]["alertname"] for series in self.query(query)}

    def targets_up(self) -> int:
        return sum(int(float(series["value"][1])) for series in self.query("up"))
