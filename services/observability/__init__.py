"""Metrics (Prometheus), health endpoints and structured logs for every studio process."""
