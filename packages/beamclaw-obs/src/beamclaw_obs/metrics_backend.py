"""Prometheus metrics fed by obs events.

The backend owns a :class:`prometheus_client.CollectorRegistry` (the process default
unless one is passed) so ``/metrics`` can render exactly these series.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector

from beamclaw_obs.emitter import BackendStats
from beamclaw_obs.events import Event, EventType

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class _DropCollector(Collector):
    def __init__(self, stats: Callable[[], dict[str, BackendStats]]) -> None:
        self._stats = stats

    def collect(self) -> Iterable[CounterMetricFamily]:
        dropped = CounterMetricFamily(
            "beamclaw_obs_dropped_events",
            "Events dropped because a backend queue was full",
            labels=["backend"],
        )
        failed = CounterMetricFamily(
            "beamclaw_obs_failed_events", "Events a backend raised on", labels=["backend"]
        )
        for name, stat in self._stats().items():
            dropped.add_metric([name], stat.dropped)
            failed.add_metric([name], stat.failed)
        yield dropped
        yield failed


_TURN_OUTCOMES = {
    EventType.TURN_COMPLETE: "done",
    EventType.TURN_ERROR: "error",
    EventType.TURN_CANCELLED: "cancelled",
}
"""The events that end a turn, and the ``outcome`` label each counts under."""


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class MetricsBackend:
    """Counts every event and turns the data the catalogue carries into series.

    Each series reads only fields its event always carries (docs/architecture.md lists
    them): turns by outcome and their durations, tokens and cost from ``turn_complete``;
    errors by kind from ``turn_error`` (source ``turn``) and failed ``llm_response``
    (source ``llm``); LLM and tool calls with their durations; HTTP requests by status.
    """

    name = "metrics"

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        stats: Callable[[], dict[str, BackendStats]] | None = None,
    ) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.events = Counter("beamclaw_events", "Events by type", ["type"], registry=r)
        self.llm_requests = Counter(
            "beamclaw_llm_responses", "LLM calls by outcome", ["model", "success"], registry=r
        )
        self.llm_seconds = Histogram(
            "beamclaw_llm_duration_seconds",
            "LLM call duration",
            ["model"],
            buckets=_SECONDS,
            registry=r,
        )
        self.tool_calls = Counter(
            "beamclaw_tool_calls", "Tool calls by outcome", ["tool", "success"], registry=r
        )
        self.tool_seconds = Histogram(
            "beamclaw_tool_duration_seconds",
            "Tool call duration",
            ["tool"],
            buckets=_SECONDS,
            registry=r,
        )
        self.turns = Counter(
            "beamclaw_turns",
            "Turns ended, by outcome (done, error, cancelled)",
            ["outcome"],
            registry=r,
        )
        self.turn_seconds = Histogram(
            "beamclaw_turn_duration_seconds",
            "Whole-turn duration, from the user message to the turn's end",
            ["outcome"],
            buckets=_SECONDS,
            registry=r,
        )
        self.turn_tokens = Counter(
            "beamclaw_turn_tokens", "Tokens of completed turns", ["kind"], registry=r
        )
        self.turn_cost = Counter(
            "beamclaw_turn_cost_usd", "Cost of completed turns in US dollars", registry=r
        )
        self.errors = Counter(
            "beamclaw_errors",
            "Errors by source (turn, llm) and kind",
            ["source", "kind"],
            registry=r,
        )
        self.tokens = Counter("beamclaw_llm_tokens", "Tokens used", ["model", "kind"], registry=r)
        self.http_requests = Counter(
            "beamclaw_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=r,
        )
        self.http_seconds = Histogram(
            "beamclaw_http_request_duration_seconds",
            "HTTP request duration",
            ["route"],
            buckets=_SECONDS,
            registry=r,
        )
        if stats is not None:
            r.register(_DropCollector(stats))
        self._children: dict[tuple[MetricWrapperBase, tuple[str, ...]], Any] = {}

    def _of(self, metric: MetricWrapperBase, *values: str) -> Any:
        """``metric.labels(*values)``, remembered: prometheus-client validates the labels
        and takes a lock on every call (~3 µs), and a turn sends a handful of events."""
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def handle(self, event: Event) -> None:
        d = event.data
        kind = event.type
        self._of(self.events, kind.value).inc()
        if kind is EventType.LLM_RESPONSE:
            self._llm(d)
        elif kind is EventType.TOOL_CALL_RESULT:
            tool = str(d.get("tool_name", "unknown"))
            self._of(self.tool_calls, tool, str(bool(d.get("success")))).inc()
            if (ms := _number(d.get("duration_ms"))) is not None:
                self._of(self.tool_seconds, tool).observe(ms / 1000)
        elif kind in _TURN_OUTCOMES:
            self._turn_end(_TURN_OUTCOMES[kind], d)
        elif kind is EventType.HTTP_REQUEST:
            route = str(d.get("route", "unknown"))
            method, status = str(d.get("method", "")), str(d.get("status", ""))
            self._of(self.http_requests, method, route, status).inc()
            if (ms := _number(d.get("duration_ms"))) is not None:
                self._of(self.http_seconds, route).observe(ms / 1000)

    def _llm(self, d: dict[str, object]) -> None:
        model = str(d.get("model", "unknown"))
        self._of(self.llm_requests, model, str(bool(d.get("success")))).inc()
        if (ms := _number(d.get("duration_ms"))) is not None:
            self._of(self.llm_seconds, model).observe(ms / 1000)
        for kind in ("prompt_tokens", "completion_tokens"):
            if (count := _number(d.get(kind))) is not None:
                self._of(self.tokens, model, kind).inc(count)
        if d.get("error_kind"):
            self._of(self.errors, "llm", str(d["error_kind"])).inc()

    def _turn_end(self, outcome: str, d: dict[str, object]) -> None:
        self._of(self.turns, outcome).inc()
        if (ms := _number(d.get("total_duration_ms"))) is not None:
            self._of(self.turn_seconds, outcome).observe(ms / 1000)
        if outcome == "error":
            self._of(self.errors, "turn", str(d.get("kind", "unknown"))).inc()
        for kind in ("prompt_tokens", "completion_tokens"):
            if (count := _number(d.get(kind))) is not None:
                self._of(self.turn_tokens, kind).inc(count)
        if (cost := _number(d.get("cost_usd"))) is not None:
            self.turn_cost.inc(cost)

    def render(self) -> bytes:
        """The Prometheus text exposition of this backend's registry."""
        return generate_latest(self.registry)

    def close(self) -> None:
        return None
