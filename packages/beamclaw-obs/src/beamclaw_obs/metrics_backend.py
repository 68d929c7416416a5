"""Prometheus metrics fed by obs events.

The backend owns a :class:`prometheus_client.CollectorRegistry` (the process default
unless one is passed) so ``/metrics`` can render exactly these series.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
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


class MetricsBackend:
    """Counts every event and records the durations the catalogue carries."""

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
        self.turn_seconds = Histogram(
            "beamclaw_turn_duration_seconds",
            "Whole-turn duration",
            buckets=_SECONDS,
            registry=r,
        )
        self.tokens = Counter("beamclaw_llm_tokens", "Tokens used", ["model", "kind"], registry=r)
        if stats is not None:
            r.register(_DropCollector(stats))

    def handle(self, event: Event) -> None:
        d = event.data
        self.events.labels(type=event.type.value).inc()
        if event.type is EventType.LLM_RESPONSE:
            model = str(d.get("model", "unknown"))
            self.llm_requests.labels(model=model, success=str(bool(d.get("success")))).inc()
            if isinstance(d.get("duration_ms"), int | float):
                self.llm_seconds.labels(model=model).observe(float(d["duration_ms"]) / 1000)
            for kind in ("prompt_tokens", "completion_tokens"):
                if isinstance(d.get(kind), int):
                    self.tokens.labels(model=model, kind=kind).inc(d[kind])
        elif event.type is EventType.TOOL_CALL_RESULT:
            tool = str(d.get("tool_name", "unknown"))
            self.tool_calls.labels(tool=tool, success=str(bool(d.get("success")))).inc()
            if isinstance(d.get("duration_ms"), int | float):
                self.tool_seconds.labels(tool=tool).observe(float(d["duration_ms"]) / 1000)
        elif event.type is EventType.TURN_COMPLETE and isinstance(
            d.get("total_duration_ms"), int | float
        ):
            self.turn_seconds.observe(float(d["total_duration_ms"]) / 1000)

    def render(self) -> bytes:
        """The Prometheus text exposition of this backend's registry."""
        return generate_latest(self.registry)

    def close(self) -> None:
        return None
