"""One error dialect: every failure of every route is an OpenAI-shaped JSON body, and
every response carries ``X-Request-Id``, which the request's log lines carry too."""

from __future__ import annotations

import re
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

import httpx
from loguru import logger

from beamclaw_core.testing import ScriptedProvider

from .conftest import live_gateway

SECRET = "sk-very-secret-value-123"


class _BoomError(RuntimeError):
    pass


async def _raises() -> dict[str, str]:
    raise _BoomError(f"database password is {SECRET}")


@contextmanager
def captured_logs() -> Generator[list[Any]]:
    """Loguru records written inside the block (add it after the gateway configured
    logging: start-up replaces every sink)."""
    records: list[Any] = []
    sink = logger.add(lambda message: records.append(message.record), level="DEBUG")
    try:
        yield records
    finally:
        logger.remove(sink)


def _assert_openai_error(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert re.fullmatch(r"[0-9a-f]{32}", r.headers["x-request-id"])
    return error


async def test_an_unhandled_exception_is_a_json_500_with_the_request_id_in_the_log() -> None:
    async with live_gateway(ScriptedProvider([])) as gw:
        gw.app.api().add_api_route("/api/test-boom", _raises, methods=["GET"])
        with captured_logs() as log_records:
            async with httpx.AsyncClient(base_url=gw.base_url) as c:
                r = await c.get("/api/test-boom")
    error = _assert_openai_error(r, 500)
    assert error["type"] == "api_error" and error["code"] == "internal_error"
    assert SECRET not in r.text and "Traceback" not in r.text and "_BoomError" not in r.text
    request_id = r.headers["x-request-id"]
    failures = [rec for rec in log_records if rec["exception"] is not None]
    assert failures, "the failure was not logged"
    assert failures[-1]["extra"]["request_id"] == request_id
    assert request_id in failures[-1]["message"]


async def test_404_405_422_and_auth_errors_are_openai_json() -> None:
    async with (
        live_gateway(ScriptedProvider([])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        unknown = await c.get("/no/such/route")
        wrong_method = await c.delete("/v1/chat/completions")
        invalid = await c.post("/api/deliver", json={"nothing": "useful"})
        bad_webhook = await c.post("/webhook/unknown-source", json={})
        document = (await c.get("/openapi.json")).json()
    assert _assert_openai_error(unknown, 404)["code"] == "not_found"
    assert _assert_openai_error(wrong_method, 405)["code"] == "method_not_allowed"
    assert "allow" in wrong_method.headers
    assert _assert_openai_error(invalid, 422)["type"] == "invalid_request_error"
    assert bad_webhook.status_code >= 400
    _assert_openai_error(bad_webhook, bad_webhook.status_code)
    deliver_422 = document["paths"]["/api/deliver"]["post"]["responses"]["422"]
    schema = deliver_422["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/ErrorResponse"}
    assert "422" not in document["paths"]["/v1/chat/completions"]["post"]["responses"]


async def test_every_response_carries_a_request_id_a_sane_client_one_is_kept() -> None:
    async with (
        live_gateway(ScriptedProvider([])) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        ok = await c.get("/health")
        kept = await c.get("/v1/models", headers={"X-Request-Id": "client-id.42:a_b-c"})
        replaced = await c.get("/v1/models", headers={"X-Request-Id": "bad id\twith junk" * 20})
    assert re.fullmatch(r"[0-9a-f]{32}", ok.headers["x-request-id"])
    assert kept.headers["x-request-id"] == "client-id.42:a_b-c"
    assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["x-request-id"])
