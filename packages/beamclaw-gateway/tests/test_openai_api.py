"""/v1 through the official ``openai`` client against a real uvicorn server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from beamclaw_core.messages import Message, Usage
from beamclaw_core.providers.base import CompletionOptions
from beamclaw_core.testing import CallTool, Fail, Reply, ScriptedProvider
from beamclaw_gateway import BeamclawConfig

from .conftest import FailingDatabases, gateway_config, live_gateway

USER = [{"role": "user", "content": "hi"}]


def _sse_content(text: str) -> str:
    """The answer a raw /v1 SSE body streams: its content deltas joined."""
    lines = [line[6:] for line in text.splitlines() if line.startswith("data: {")]
    deltas = [json.loads(line)["choices"] for line in lines]
    return "".join(c[0]["delta"].get("content") or "" for c in deltas if c)


def client_for(base_url: str, **kw: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0, **kw)


async def test_non_streaming_turn_returns_completion_with_usage() -> None:
    usage = Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10)
    provider = ScriptedProvider([Reply("Hello there!", usage=usage)])
    async with live_gateway(provider) as gw:
        async with client_for(gw.base_url) as client:
            raw = await client.chat.completions.with_raw_response.create(
                model="beamclaw/default", messages=USER
            )
        completion = raw.parse()
        session_id = raw.headers["x-session-id"]
    assert completion.object == "chat.completion"
    assert completion.model == "beamclaw/default"
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].message.content == "Hello there!"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.total_tokens) == (7, 10)
    assert session_id.startswith("session-")


async def test_sync_client_in_a_thread_and_bare_agent_id() -> None:
    provider = ScriptedProvider([Reply("sync answer")])
    async with live_gateway(provider) as gw:

        def call() -> str | None:
            with openai.OpenAI(base_url=f"{gw.base_url}/v1", api_key="x", max_retries=0) as client:
                done = client.chat.completions.create(model="default", messages=USER)  # type: ignore[arg-type]
                return done.choices[0].message.content

        assert await asyncio.to_thread(call) == "sync answer"


async def test_whole_turn_includes_tool_steps_and_only_last_user_message_is_sent() -> None:
    provider = ScriptedProvider(
        [CallTool("think", {"thought": "let me think"}), Reply("Final answer after thinking.")]
    )
    async with live_gateway(provider) as gw, client_for(gw.base_url) as client:
        completion = await client.chat.completions.create(
            model="beamclaw/default",
            messages=[
                {"role": "system", "content": "ignored: the agent has its own prompt"},
                {"role": "user", "content": "old message"},
                {"role": "assistant", "content": "old answer"},
                {"role": "user", "content": "the new question"},
            ],
        )
    assert completion.choices[0].message.content is not None
    assert completion.choices[0].message.content.endswith("Final answer after thinking.")
    assert len(provider.calls) == 2
    sent: list[Message] = provider.calls[0].messages
    user_texts = [m.text for m in sent if m.role.value == "user"]
    assert user_texts == ["the new question"]
    assert any(m.role.value == "tool" for m in provider.calls[1].messages)


async def test_streaming_chunks_usage_and_done() -> None:
    usage = Usage(prompt_tokens=5, completion_tokens=4, total_tokens=9)
    provider = ScriptedProvider([Reply("streamed answer text", usage=usage)], chunk_size=4)
    async with live_gateway(provider) as gw:
        async with client_for(gw.base_url) as client:
            stream = await client.chat.completions.create(
                model="beamclaw/default",
                messages=USER,
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks = [c async for c in stream]
        async with httpx.AsyncClient(base_url=gw.base_url) as raw:
            r = await raw.post(
                "/v1/chat/completions",
                json={"model": "beamclaw/default", "messages": USER, "stream": True},
            )
    provider_reply = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert provider_reply == "streamed answer text"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in finals] == ["stop"]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 9
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.text.rstrip().endswith("data: [DONE]")
    # Without include_usage no chunk carries usage.
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    assert all("usage" not in e for e in events)


async def test_unknown_model_is_openai_not_found() -> None:
    async with live_gateway(ScriptedProvider([])) as gw, client_for(gw.base_url) as client:
        with pytest.raises(openai.NotFoundError) as info:
            await client.chat.completions.create(model="beamclaw/nobody", messages=USER)
    body = info.value.body
    assert isinstance(body, dict)
    assert body["code"] == "model_not_found"
    assert body["param"] == "model"


async def test_bad_input_is_openai_shaped() -> None:
    async with (
        live_gateway(ScriptedProvider([])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        bad_json = await c.post(
            "/v1/chat/completions",
            content=b"{not json",
            headers={"content-type": "application/json"},
        )
        wrong_type = await c.post("/v1/chat/completions", json={"model": 3, "messages": "hello"})
        no_user = await c.post(
            "/v1/chat/completions",
            json={"model": "default", "messages": [{"role": "system", "content": "x"}]},
        )
        huge = await c.post(
            "/v1/chat/completions",
            json={
                "model": "default",
                "messages": [{"role": "user", "content": "x" * 9_000_000}],
            },
        )
    for r in (bad_json, wrong_type, no_user):
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "invalid_request_error"
    assert "JSON" in bad_json.json()["error"]["message"]
    assert huge.status_code == 413
    assert huge.json()["error"]["code"] == "request_too_large"


async def test_upstream_streams_only_when_the_client_streams() -> None:
    provider = ScriptedProvider([Reply("whole"), Reply("in pieces")], chunk_size=3)
    async with live_gateway(provider) as gw, client_for(gw.base_url) as client:
        whole = await client.chat.completions.create(model="beamclaw/default", messages=USER)
        stream = await client.chat.completions.create(
            model="beamclaw/default", messages=USER, stream=True
        )
        pieces = [c.choices[0].delta.content async for c in stream if c.choices]
    assert whole.choices[0].message.content == "whole"
    assert "".join(p for p in pieces if p) == "in pieces"
    # nobody watched the non-streaming turn: one plain upstream request
    assert [c.stream for c in provider.calls] == [False, True]


async def test_request_headers_are_validated_and_documented() -> None:
    body = {"model": "default", "messages": USER}
    async with (
        live_gateway(ScriptedProvider([Reply("fine")])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        long_session = await c.post(
            "/v1/chat/completions", json=body, headers={"X-Session-Id": "s" * 129}
        )
        bad_mode = await c.post(
            "/v1/chat/completions", json=body, headers={"X-Approval-Mode": "maybe"}
        )
        long_key = await c.post(
            "/v1/chat/completions", json=body, headers={"Idempotency-Key": "k" * 257}
        )
        ok = await c.post(
            "/v1/chat/completions",
            json=body,
            headers={"X-Session-Id": "s" * 128, "X-Approval-Mode": "deny", "X-User-Id": "u"},
        )
        schema = (await c.get("/openapi.json")).json()
    for r, param in (
        (long_session, "header.x-session-id"),
        (bad_mode, "header.x-approval-mode"),
        (long_key, "header.idempotency-key"),
    ):
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert error["param"] == param
    assert ok.status_code == 200 and ok.headers["x-session-id"] == "s" * 128
    params = schema["paths"]["/v1/chat/completions"]["post"]["parameters"]
    by_name = {p["name"]: p for p in params}
    assert set(by_name) == {"X-User-Id", "X-Session-Id", "Idempotency-Key", "X-Approval-Mode"}
    assert all(p["in"] == "header" for p in params)
    assert by_name["X-Session-Id"]["schema"]["maxLength"] == 128
    assert by_name["X-Approval-Mode"]["schema"]["enum"] == ["deny", "wait"]


async def test_upstream_failure_mid_stream_then_session_still_usable() -> None:
    config = gateway_config()
    config.core.agentic_loop.max_attempts = 1
    provider = ScriptedProvider([Fail("auth", after_chunks=2), Reply("recovered")], chunk_size=3)
    headers = {"X-Session-Id": "stream-failure"}
    async with live_gateway(provider, config) as gw:
        async with client_for(gw.base_url, default_headers=headers) as client:
            stream = await client.chat.completions.create(
                model="beamclaw/default", messages=USER, stream=True
            )
            with pytest.raises(openai.APIError):
                async for _chunk in stream:
                    pass
            again = await client.chat.completions.create(model="beamclaw/default", messages=USER)
        async with httpx.AsyncClient(base_url=gw.base_url) as raw:
            r = await raw.post(
                "/v1/chat/completions",
                json={"model": "beamclaw/default", "messages": USER, "stream": True},
                headers={"X-Session-Id": "other"},
            )
    assert again.choices[0].message.content == "recovered"
    # the raw stream of a failed turn: an error object, then [DONE]
    lines = [line for line in r.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert "error" in json.loads(lines[-2][6:])


class GatedProvider(ScriptedProvider):
    """Streams the first chunk, then waits for ``release`` before finishing."""

    def __init__(self) -> None:
        super().__init__([Reply("first part, then the rest of the answer")], chunk_size=10)
        self.release = asyncio.Event()
        self.first_chunk_sent = asyncio.Event()

    async def stream(self, messages: list[Message], options: CompletionOptions) -> Any:  # type: ignore[override]
        sent = 0
        async for chunk in super().stream(messages, options):
            yield chunk
            sent += 1
            if sent == 1:
                self.first_chunk_sent.set()
                await self.release.wait()


async def test_client_disconnecting_mid_stream_does_not_lose_the_turn() -> None:
    provider = GatedProvider()
    async with live_gateway(provider) as gw:
        async with (
            httpx.AsyncClient(base_url=gw.base_url) as c,
            c.stream(
                "POST",
                "/v1/chat/completions",
                json={"model": "beamclaw/default", "messages": USER, "stream": True},
                headers={"X-Session-Id": "disconnect"},
            ) as response,
        ):
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    break
        await provider.first_chunk_sent.wait()
        provider.release.set()
        core = gw.runtime.core
        for _ in range(200):
            await core.wait_idle("disconnect")
            history = await core.history("disconnect")
            if any(m.role.value == "assistant" for m in history):
                break
            await asyncio.sleep(0.02)
    answers = [m.text for m in history if m.role.value == "assistant"]
    assert answers == ["first part, then the rest of the answer"]


async def test_idempotency_key_replays_without_a_second_turn_even_after_restart(
    beamclaw_home: Path,
) -> None:
    provider = ScriptedProvider([Reply("only once"), Reply("second turn!")])
    body = {"model": "beamclaw/default", "messages": USER}
    headers = {"Idempotency-Key": "k-123"}
    async with live_gateway(provider) as gw, httpx.AsyncClient(base_url=gw.base_url) as c:
        first = await c.post("/v1/chat/completions", json=body, headers=headers)
        second = await c.post("/v1/chat/completions", json=body, headers=headers)
        streamed = await c.post(
            "/v1/chat/completions",
            json={**body, "stream": True},
            headers={"Idempotency-Key": "k-s"},
        )
        reused = await c.post(
            "/v1/chat/completions",
            json={**body, "messages": [{"role": "user", "content": "other"}]},
            headers=headers,
        )
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert _sse_content(streamed.text) == "second turn!"  # streamed in several chunks
    assert len(provider.calls) == 2
    # A new gateway process on the same home answers the retry from the database.
    provider2 = ScriptedProvider([Reply("must not run")])
    async with live_gateway(provider2) as gw2, httpx.AsyncClient(base_url=gw2.base_url) as c:
        third = await c.post("/v1/chat/completions", json=body, headers=headers)
        replay_stream = await c.post(
            "/v1/chat/completions",
            json={**body, "stream": True},
            headers={"Idempotency-Key": "k-s"},
        )
    assert third.json() == first.json()
    assert provider2.calls == []
    assert "second turn!" in replay_stream.text
    assert replay_stream.text.rstrip().endswith("data: [DONE]")


async def test_models_lists_default_and_workspace_agents(beamclaw_home: Path) -> None:
    from beamclaw_core.workspace import create_agent

    create_agent("research", home=beamclaw_home)
    provider = ScriptedProvider([Reply("from research")])
    async with live_gateway(provider) as gw, client_for(gw.base_url) as client:
        models = await client.models.list()
        done = await client.chat.completions.create(model="beamclaw/research", messages=USER)
        sessions = await gw.runtime.core.list_sessions()
    assert [m.id for m in models.data] == ["beamclaw/default", "beamclaw/research"]
    assert done.choices[0].message.content == "from research"
    assert [s.agent_id for s in sessions] == ["research"]


async def test_user_and_session_routing() -> None:
    provider = ScriptedProvider([Reply("a"), Reply("b"), Reply("c")])
    async with live_gateway(provider) as gw:
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            body = {"model": "default", "messages": USER}
            r1 = await c.post("/v1/chat/completions", json={**body, "user": "ann"})
            r2 = await c.post("/v1/chat/completions", json=body, headers={"X-User-Id": "ann"})
            r3 = await c.post("/v1/chat/completions", json={**body, "session_id": "mine"})
        core = gw.runtime.core
        expected = core.session_id(
            __import__("beamclaw_core.sessions", fromlist=["x"]).SessionAddress(
                "api:ann", "default", "api"
            )
        )
    assert r1.headers["x-session-id"] == r2.headers["x-session-id"] == expected
    assert r3.headers["x-session-id"] == "mine"


async def test_x_user_id_header_beats_the_body_user_field() -> None:
    provider = ScriptedProvider([Reply("a")])
    async with live_gateway(provider) as gw:
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            r = await c.post(
                "/v1/chat/completions",
                json={"model": "default", "messages": USER, "user": "body-user"},
                headers={"X-User-Id": "header-user"},
            )
        sessions = await gw.runtime.core.list_sessions()
    assert r.status_code == 200, r.text
    assert [s.user_id for s in sessions] == ["api:header-user"]
    assert r.headers["x-session-id"] == sessions[0].session_id


async def test_approval_in_an_http_turn_is_denied_by_default_never_hangs() -> None:
    provider = ScriptedProvider(
        [CallTool("write_file", {"path": "x.txt", "content": "hi"}), Reply("could not write")]
    )
    async with live_gateway(provider) as gw, client_for(gw.base_url) as client:
        done = await client.chat.completions.create(model="beamclaw/default", messages=USER)
    assert done.choices[0].message.content == "could not write"
    tool_results = [m for m in provider.calls[1].messages if m.role.value == "tool"]
    assert len(tool_results) == 1 and tool_results[0].is_error


def test_answer_bodies_built_directly_equal_the_models() -> None:
    from beamclaw_core.messages import Usage
    from beamclaw_gateway.openai_models import ChatCompletion, CompletionUsage

    for usage, total in (
        (Usage(prompt_tokens=11, completion_tokens=7, total_tokens=18), 18),
        (Usage(prompt_tokens=3, completion_tokens=2, cached_tokens=1, reasoning_tokens=4), 5),
    ):
        for text, finish in (("hi", "stop"), (None, "length")):
            body = ChatCompletion.body("chatcmpl-x", 5, "beamclaw/default", text, finish, usage)
            # the models' own validation and dump reproduce it field for field
            assert ChatCompletion.model_validate(body).model_dump(mode="json") == body
            assert body["choices"][0]["message"]["content"] == text
            assert body["choices"][0]["finish_reason"] == finish
            counted = CompletionUsage.body(usage)
            assert CompletionUsage.model_validate(counted).model_dump(mode="json") == counted
            assert counted["total_tokens"] == total
            assert counted["prompt_tokens_details"] == {"cached_tokens": usage.cached_tokens}


async def _refused_request(
    provider: ScriptedProvider,
    config: BeamclawConfig,
    databases: FailingDatabases,
    *,
    failing_from_start: bool,
) -> tuple[openai.APIStatusError, list[list[str]]]:
    """One /v1 request that must fail, and the texts of every session's history after."""
    async with live_gateway(provider, config, database_factory=databases.open) as gw:
        databases[0].failing = failing_from_start
        async with client_for(gw.base_url, timeout=10.0) as client:
            with pytest.raises(openai.APIStatusError) as failed:
                await client.chat.completions.create(model="beamclaw/default", messages=USER)
        databases[0].failing = False  # let the gateway stop cleanly
        core = gw.runtime.core
        sessions = await core.list_sessions()
        histories = [[m.text for m in await core.history(s.session_id)] for s in sessions]
    return failed.value, histories


async def test_a_store_outage_mid_turn_answers_with_an_error_instead_of_hanging() -> None:
    """The store fails every write from the turn's LLM call on: the question was stored
    before the model was asked and stays; the loop crashes past its restart budget and
    its give-up cannot store the error either. The /v1 client still gets an error answer
    (the turn's ``TurnError``), within a bound: not a hang."""
    config = gateway_config()
    config.core.restart.max_restarts = 1
    config.core.restart.backoff_seconds = 0.0
    databases = FailingDatabases()

    def rule(_messages: list[Message], _options: CompletionOptions) -> Reply:
        databases[0].failing = True  # from here on nothing can be stored
        return Reply("never stored")

    provider = ScriptedProvider([rule], repeat_last=True)
    failed, histories = await _refused_request(
        provider, config, databases, failing_from_start=False
    )
    assert histories == [["hi"]]
    assert failed.status_code == 502
    assert "kept crashing (DatabaseUnavailableError)" in failed.message
    assert databases[0].failed_writes >= 3


async def test_a_message_the_store_cannot_take_is_answered_503_and_never_sent() -> None:
    """The store fails from the start: the turn's first commit fails, so nothing of the
    turn is stored and the model is never asked; the /v1 client gets a 503 naming the
    database (with ``Retry-After``) at once: not a 500, not a hang."""
    databases = FailingDatabases()
    provider = ScriptedProvider([Reply("never asked")], repeat_last=True)
    failed, histories = await _refused_request(
        provider, gateway_config(), databases, failing_from_start=True
    )
    assert all(h == [] for h in histories)
    assert provider.calls == []
    assert failed.status_code == 503
    assert failed.response.headers["retry-after"] == "10"
    assert "cannot be reached" in failed.message
    assert "nothing was saved" in failed.message
    assert databases[0].failed_writes >= 1
