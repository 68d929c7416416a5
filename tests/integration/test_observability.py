"""Observability says what it claims: every catalogue event type is emitted by a real
scenario, and ``/metrics`` counts turns, tokens, cost, errors by kind and durations.

One gateway over real HTTP (uvicorn) with the fake OpenAI server behind a failover chain,
the scripted MCP server (plus one that never answers), a failing embeddings endpoint and
auto-context memory. Scenarios: plain, tool (with a denied approval), limit, retry,
failover, error, overflow (compaction with a memory flush), sub-agent and MCP tool turns;
a webhook whose turn hangs while two more queue (one dropped) until a reset cancels it;
``/new``; a delete; an unauthorised and a rate-limited request; a restart that recovers
a turn cut by the stop; a sandbox container made by a run and removed at its session's
end (real Docker engine). A new catalogue member that nothing emits fails this test.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from beamclaw_core.compaction.compactor import SUMMARY_INSTRUCTIONS
from beamclaw_core.compaction.flush import FLUSH_INSTRUCTIONS
from beamclaw_core.providers import ProviderSettings
from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    FakeStep,
    FakeToolCall,
    HttpFault,
    RecordedRequest,
    ServerHang,
)
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.settings import WebhookSourceSettings
from beamclaw_gateway.testing import LiveGateway, live_gateway, quiet_config
from beamclaw_mcp import MCPSettings
from beamclaw_mcp.testing import broken_server_entry, scripted_server_entry
from beamclaw_memory.testing import FakeEmbeddingServer
from beamclaw_obs import Event, EventType, Secret, get_emitter
from beamclaw_obs.testing import EventRecorder, recording_events
from beamclaw_sandbox import Sandbox, SandboxSettings
from beamclaw_sandbox.testing import require_image

TOKEN = "obs-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PRIMARY = "gpt-4o-mini"  # priced by the built-in table: turns have a cost
BACKUP = "gpt-4o-mini-backup"


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [
        m["content"]
        for m in body.get("messages", [])
        if m.get("role") == "user" and isinstance(m.get("content"), str)
    ]


class Router:
    """The fake LLM's script: one step per request, chosen from what the request asks."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def _first(self, marker: str) -> bool:
        self.seen[marker] = self.seen.get(marker, 0) + 1
        return self.seen[marker] == 1

    def __call__(self, request: RecordedRequest) -> FakeStep:
        body: dict[str, Any] = request.body
        messages: list[dict[str, Any]] = body.get("messages", [])
        contents = [str(m.get("content") or "") for m in messages]
        if any(c.startswith(SUMMARY_INSTRUCTIONS[:40]) for c in contents):
            return FakeReply("The user ran test scenarios.")
        if any(FLUSH_INSTRUCTIONS[:40] in c for c in contents):
            return FakeReply("NO_REPLY")
        users = _user_texts(body)
        last = users[-1] if users else ""
        after_tool = bool(messages) and messages[-1].get("role") == "tool"
        primary = body.get("model") == PRIMARY
        if "[child]" in last:
            return FakeReply("child result")
        if "[limit]" in last:
            return FakeReply("again", tool_calls=(FakeToolCall("think", {"thought": "more"}),))
        if after_tool:
            return FakeReply("done after tools")
        if "[tool]" in last:
            return FakeReply(
                "working",
                tool_calls=(
                    FakeToolCall("think", {"thought": "plan"}),
                    FakeToolCall("write_file", {"path": "x.txt", "content": "x"}),
                ),
            )
        if "[mcp]" in last:
            return FakeReply("growing", tool_calls=(FakeToolCall("grow", {}),))
        if "[spawn]" in last:
            tasks = {"tasks": [{"task": "[child] count the stars"}]}
            return FakeReply("delegating", tool_calls=(FakeToolCall("spawn_agents", tasks),))
        if "[retry]" in last and self._first(f"retry {body.get('model')}"):  # every member
            return HttpFault.server_error(503)
        if "[failover]" in last and primary:
            return HttpFault.rate_limit(0)
        if "[error]" in last:
            return HttpFault.bad_request()
        if "[overflow]" in last and self._first("overflow"):
            return HttpFault.context_overflow()
        if "[hang]" in last and self._first(last):
            return ServerHang()
        return FakeReply("hello there")


def gateway_config(llm: FakeOpenAIServer, embeddings: FakeEmbeddingServer) -> BeamclawConfig:
    config = quiet_config()
    core = config.core
    core.default_provider = "primary"
    core.providers = {
        "primary": ProviderSettings.model_validate(
            {
                "kind": "openai",
                "base_url": llm.base_url,
                "model": PRIMARY,
                "fallbacks": ["backup"],
                "failure_threshold": 100,
            }
        ),
        "backup": ProviderSettings(kind="openai", base_url=llm.base_url, model=BACKUP),
    }
    core.agentic_loop.max_tool_iterations = 1
    core.agentic_loop.max_attempts = 3
    core.queue.cap = 1
    config.memory.auto_context = True
    config.memory.embeddings.base_url = embeddings.base_url
    config.mcp = MCPSettings.model_validate(
        {
            "initialize_timeout_seconds": 20.0,
            "backoff_initial_seconds": 0.05,
            "backoff_max_seconds": 0.1,
            "max_restarts": 1,
            "servers": [
                scripted_server_entry("fx"),
                {**broken_server_entry("mute", "silent"), "initialize_timeout_seconds": 0.3},
            ],
        }
    )
    config.gateway.http.token = Secret(env="BC_OBS_TEST_TOKEN")
    config.gateway.webhooks = {"hooks": WebhookSourceSettings(secret=Secret(env="BC_OBS_HOOK"))}
    return config


async def _chat(c: httpx.AsyncClient, text: str, session: str = "obs-main") -> httpx.Response:
    return await c.post(
        "/v1/chat/completions",
        json={"model": "default", "messages": [{"role": "user", "content": text}]},
        headers={**AUTH, "X-Session-Id": session, "X-Approval-Mode": "deny"},
    )


async def _until(check: Callable[[], bool], seconds: float = 15.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached in time")


def _seen(recorder: EventRecorder, kind: EventType, **data: Any) -> bool:
    return any(
        all(e.data.get(k) == v for k, v in data.items())
        for e in list(recorder.events)
        if e.type is kind
    )


async def _hook(c: httpx.AsyncClient, text: str) -> httpx.Response:
    r = await c.post("/webhook/hooks", content=text, headers={"X-Webhook-Secret": "hook-secret"})
    assert r.status_code == 202, r.text
    return r


async def _main_gateway(gw: LiveGateway, recorder: EventRecorder, router: Router) -> bytes:
    async with httpx.AsyncClient(base_url=gw.base_url, timeout=30) as c:
        await gw.runtime.system.mcp.wait_settled(20.0)  # type: ignore[union-attr]
        for text in ("hello", "[tool] plan", "[limit] loop", "[retry] once", "[failover] go"):
            assert (await _chat(c, text)).status_code == 200, text
        assert (await _chat(c, "[error] please")).status_code >= 400
        for text in ("[overflow] big", "[mcp] grow", "[spawn] delegate", "/new"):
            assert (await _chat(c, text)).status_code == 200, text

        # a webhook turn hangs; two more queue behind it (cap 1: the first is dropped)
        first = (await _hook(c, "[hang] webhook")).json()
        await _hook(c, "queued one")
        await _hook(c, "queued two")
        await _until(lambda: _seen(recorder, EventType.QUEUE_DROPPED))
        sid = first["session_id"]
        assert (await c.post(f"/api/sessions/{sid}/reset", headers=AUTH)).status_code == 200
        assert (await c.delete(f"/api/sessions/{sid}", headers=AUTH)).status_code == 200
        assert (
            await c.get("/api/status", headers={"Authorization": "Bearer nope"})
        ).status_code == 401

        # a turn in flight when the gateway stops is recovered by the next one
        await _hook(c, "[hang] across a restart")
        await _until(lambda: any("across a restart" in key for key in router.seen))
        metrics = await c.get("/metrics")
    assert metrics.status_code == 200
    return metrics.content


async def _first_gateway(config: BeamclawConfig, recorder: EventRecorder, router: Router) -> str:
    async with live_gateway(config=config) as gw:
        return (await _main_gateway(gw, recorder, router)).decode()


async def _second_gateway(config: BeamclawConfig, recorder: EventRecorder) -> list[int]:
    """The restart: the cut turn is recovered; a strict limit answers 429."""
    async with (
        live_gateway(config=config) as gw,
        httpx.AsyncClient(base_url=gw.base_url, timeout=30) as c,
    ):
        await _until(lambda: _seen(recorder, EventType.SESSION_RECOVERED))
        return [(await c.get("/api/status", headers=AUTH)).status_code for _ in range(3)]


def _metric(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:]+)(\{[^}]*\})? (\S+)$", line)
        if m is None or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BC_OBS_TEST_TOKEN", TOKEN)
    monkeypatch.setenv("BC_OBS_HOOK", "hook-secret")


async def _sandbox_container(home: Path) -> None:
    """One sandbox run (``sandbox_start``) and its session's end (``sandbox_stop``)."""
    image = (await asyncio.to_thread(require_image)).image
    sandbox = Sandbox(SandboxSettings(enabled=True, image=image), home=home)
    await sandbox.start()
    try:
        assert (await sandbox.run("session:obs", "print(1)", "python", 30)).stdout == "1\n"
        assert await sandbox.end_session("obs")
    finally:
        await sandbox.stop()


@pytest.mark.docker
async def test_every_event_type_is_emitted_and_metrics_count(tmp_path: Path) -> None:
    router = Router()
    with recording_events("observability-test") as recorder:
        async with FakeOpenAIServer([router] * 500) as llm, FakeEmbeddingServer() as emb:
            emb.status = 500
            config = gateway_config(llm, emb)
            metrics = await _first_gateway(config, recorder, router)
            config.gateway.rate_limit.per_token = "2/minute"  # its requests carry the token
            config.mcp = MCPSettings()
            assert await _second_gateway(config, recorder) == [200, 200, 429]
        await _sandbox_container(tmp_path / "sandbox-home")
        get_emitter().flush()
        events: list[Event] = list(recorder.events)

    emitted = {e.type for e in events}
    missing = sorted(t.value for t in set(EventType) - emitted)
    assert not missing, f"declared but never emitted: {missing}"

    completes = [e for e in events if e.type is EventType.TURN_COMPLETE]
    assert all(e.data["total_duration_ms"] >= 0 for e in completes)
    assert any(e.data["cost_usd"] for e in completes)
    assert _seen(recorder, EventType.SESSION_END, reason="deleted")
    assert _seen(recorder, EventType.SESSION_END, reason="shutdown")
    assert _seen(recorder, EventType.SANDBOX_STOP, key="session:obs", reason="session_end")
    assert _seen(recorder, EventType.HTTP_REQUEST, route="/api/sessions/{session_id}", status=200)

    assert _metric(metrics, "beamclaw_turns_total", outcome="done") >= 8
    assert _metric(metrics, "beamclaw_turns_total", outcome="error") >= 1
    assert _metric(metrics, "beamclaw_turns_total", outcome="cancelled") >= 1
    assert _metric(metrics, "beamclaw_turn_duration_seconds_count", outcome="done") >= 8
    assert _metric(metrics, "beamclaw_turn_duration_seconds_sum", outcome="done") > 0
    assert _metric(metrics, "beamclaw_turn_tokens_total", kind="prompt_tokens") > 0
    assert _metric(metrics, "beamclaw_turn_tokens_total", kind="completion_tokens") > 0
    assert _metric(metrics, "beamclaw_turn_cost_usd_total") > 0
    assert _metric(metrics, "beamclaw_errors_total", source="turn", kind="invalid_request") >= 1
    assert _metric(metrics, "beamclaw_errors_total", source="llm", kind="rate_limit") >= 1
    assert _metric(metrics, "beamclaw_llm_responses_total", success="True") > 0
    assert _metric(metrics, "beamclaw_llm_duration_seconds_count") > 0
    assert _metric(metrics, "beamclaw_tool_duration_seconds_count") > 0
    assert _metric(metrics, "beamclaw_http_requests_total", status="401") >= 1
    assert _metric(metrics, "beamclaw_http_requests_total", route="/v1/chat/completions") >= 10


def test_docs_describe_every_event_type() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs/architecture.md").read_text()
    table = docs.split("## Events and metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    described = {name for row in rows for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert {t.value for t in EventType} <= described
