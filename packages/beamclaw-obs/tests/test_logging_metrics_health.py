"""Log backend (JSON lines, scrubbed), metrics backend (Prometheus text), health registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loguru import logger

from beamclaw_obs import (
    ComponentHealth,
    Emitter,
    Event,
    EventType,
    HealthRegistry,
    HealthState,
    LogBackend,
    MetricsBackend,
    configure_logging,
    ensure_home,
)
from beamclaw_obs.errors import HomeNotWritableError


def test_json_log_lines_are_written_and_scrubbed(tmp_path: Path) -> None:
    path = configure_logging(tmp_path / "logs", stderr_level="ERROR")
    assert path is not None
    em = Emitter()
    em.add_backend(LogBackend())
    em.emit(
        EventType.TOOL_CALL_START, tool_name="bash", args={"cmd": "echo sk-abcdefghijklmnop1234"}
    )
    em.flush()
    em.close()
    logger.info("plain line with password=swordfish99")
    logger.remove()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    text = path.read_text()
    assert "sk-abcdefghijklmnop1234" not in text
    assert "swordfish99" not in text
    events = [r for r in lines if r["record"]["extra"].get("event") == "tool_call_start"]
    assert events and events[0]["record"]["extra"]["tool_name"] == "bash"


@pytest.mark.parametrize(
    ("file_level", "logged"),
    [
        ("DEBUG", {"tool_call_start", "child_gave_up"}),
        ("WARNING", {"child_gave_up"}),
        ("ERROR", set[str]()),
    ],
)
def test_events_below_every_sinks_level_are_not_logged(
    tmp_path: Path, file_level: str, logged: set[str]
) -> None:
    """An event no sink takes is skipped before a record is built; one a sink takes is
    written (the skip follows the levels :func:`configure_logging` set)."""
    path = configure_logging(tmp_path / "logs", stderr_level="ERROR", file_level=file_level)
    assert path is not None
    backend = LogBackend()
    for kind in (EventType.TOOL_CALL_START, EventType.CHILD_GAVE_UP):
        backend.handle(Event(type=kind, ts=0.0, data={"n": 1}))
    logger.remove()
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    assert {r["record"]["extra"].get("event") for r in lines} == logged


def test_metrics_backend_renders_prometheus_text() -> None:
    em = Emitter()
    metrics = MetricsBackend(stats=em.stats)
    em.add_backend(metrics)
    em.emit(
        EventType.LLM_RESPONSE,
        model="m1",
        success=True,
        duration_ms=120,
        prompt_tokens=10,
        completion_tokens=5,
    )
    em.emit(EventType.TOOL_CALL_RESULT, tool_name="bash", success=False, duration_ms=3)
    em.emit(
        EventType.TURN_COMPLETE,
        total_duration_ms=400,
        prompt_tokens=30,
        completion_tokens=12,
        cost_usd=0.25,
    )
    em.emit(EventType.TURN_ERROR, kind="auth", total_duration_ms=50)
    em.emit(EventType.TURN_CANCELLED, total_duration_ms=70)
    em.emit(EventType.LLM_RESPONSE, model="m1", success=False, error_kind="rate_limit")
    em.emit(EventType.HTTP_REQUEST, method="GET", route="/health", status=200, duration_ms=2)
    em.flush()
    text = metrics.render().decode()
    em.close()
    assert 'beamclaw_turns_total{outcome="done"} 1.0' in text
    assert 'beamclaw_turns_total{outcome="error"} 1.0' in text
    assert 'beamclaw_turns_total{outcome="cancelled"} 1.0' in text
    assert 'beamclaw_turn_duration_seconds_sum{outcome="done"} 0.4' in text
    assert 'beamclaw_turn_tokens_total{kind="prompt_tokens"} 30.0' in text
    assert 'beamclaw_turn_tokens_total{kind="completion_tokens"} 12.0' in text
    assert "beamclaw_turn_cost_usd_total 0.25" in text
    assert 'beamclaw_errors_total{kind="auth",source="turn"} 1.0' in text
    assert 'beamclaw_errors_total{kind="rate_limit",source="llm"} 1.0' in text
    assert 'beamclaw_http_requests_total{method="GET",route="/health",status="200"} 1.0' in text
    assert 'beamclaw_http_request_duration_seconds_count{route="/health"} 1.0' in text
    assert 'beamclaw_events_total{type="llm_response"} 2.0' in text
    assert 'beamclaw_llm_responses_total{model="m1",success="True"} 1.0' in text
    assert 'beamclaw_tool_calls_total{success="False",tool="bash"} 1.0' in text
    assert 'beamclaw_llm_tokens_total{kind="prompt_tokens",model="m1"} 10.0' in text
    assert 'beamclaw_turn_duration_seconds_count{outcome="done"} 1.0' in text
    assert 'beamclaw_obs_dropped_events_total{backend="metrics"} 0.0' in text


def test_health_registry_readiness_and_broken_probe() -> None:
    reg = HealthRegistry()
    state = {"db": ComponentHealth(HealthState.STARTING)}
    reg.register("database", lambda: state["db"], critical=True)
    reg.register("optional", lambda: ComponentHealth(HealthState.DOWN, "off"))

    def broken() -> ComponentHealth:
        raise RuntimeError("probe bug")

    reg.register("broken", broken)
    assert not reg.ready()
    state["db"] = ComponentHealth(HealthState.UP)
    assert reg.ready()
    snap = reg.snapshot()
    assert snap["broken"].state is HealthState.DOWN and "probe bug" in snap["broken"].detail
    assert reg.overall() is HealthState.DEGRADED


def test_unwritable_home_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HomeNotWritableError, match="not writable") as err:
        ensure_home(blocker / "home")
    assert str(blocker / "home") in str(err.value)


def test_a_building_component_counts_as_starting() -> None:
    reg = HealthRegistry()
    reg.register("sandbox", lambda: ComponentHealth(HealthState.BUILDING, "image"))
    assert reg.overall() is HealthState.STARTING
    assert reg.snapshot()["sandbox"].as_dict() == {"status": "building", "detail": "image"}
