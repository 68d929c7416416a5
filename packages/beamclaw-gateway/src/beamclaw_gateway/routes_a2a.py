"""HTTP side of A2A: the agent card and the JSON-RPC endpoint (a2a.py holds the logic)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from loguru import logger

from beamclaw_gateway._version import __version__
from beamclaw_gateway.a2a import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, A2AService
from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError, RpcError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import GatewayServices

router = APIRouter(tags=["a2a"])

_RPC_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["jsonrpc", "method"],
                    "properties": {
                        "jsonrpc": {"type": "string", "enum": ["2.0"]},
                        "id": {"type": ["string", "integer", "null"]},
                        "method": {
                            "type": "string",
                            "enum": ["message/send", "tasks/get", "tasks/cancel", "tasks/list"],
                        },
                        "params": {"type": "object"},
                    },
                }
            }
        },
    }
}


def _services(request: Request) -> GatewayServices:
    services: GatewayServices = request.app.state.services
    if not services.settings.a2a.enabled:
        raise ApiError(404, "A2A is disabled ([gateway.a2a] enabled = false)", code="disabled")
    return services


def _service(request: Request, services: GatewayServices) -> A2AService:
    service: A2AService | None = getattr(request.app.state, "a2a", None)
    if service is None:
        service = A2AService(services)
        request.app.state.a2a = service
    return service


@router.get(
    "/.well-known/agent.json",
    response_model=dict[str, Any],
    responses=error_responses(404, 429),
)
async def agent_card(request: Request) -> dict[str, Any]:
    """The A2A agent card (open: it is how peers discover the endpoint and its auth)."""
    services = _services(request)
    settings = services.settings.a2a
    agent = settings.agent or services.runtime.config.core.default_agent
    url = settings.public_url or str(request.base_url).rstrip("/") + "/a2a"
    card: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": f"BeamClaw ({agent})",
        "description": "A personal BeamClaw agent with tools and memory.",
        "url": url,
        "preferredTransport": "JSONRPC",
        "version": __version__,
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "stateTransitionHistory": False,
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "chat",
                "name": f"Talk to {agent}",
                "description": "Send a message; the agent answers after using its tools.",
                "tags": ["chat", "assistant"],
            }
        ],
    }
    if services.auth.required:
        card["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        card["security"] = [{"bearer": []}]
    return card


def _rpc_error(rpc_id: Any, code: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message}}
    )


@router.post(
    "/a2a",
    dependencies=[Depends(require_token)],
    response_model=dict[str, Any],
    responses=error_responses(401, 404, 413, 429),
    openapi_extra=_RPC_BODY,
)
async def a2a_rpc(request: Request) -> JSONResponse:
    """JSON-RPC 2.0: ``message/send``, ``tasks/get``, ``tasks/cancel``, ``tasks/list``."""
    services = _services(request)
    try:
        body = json.loads(await request.body())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _rpc_error(None, PARSE_ERROR, "parse error")
    if not isinstance(body, dict):
        return _rpc_error(None, INVALID_REQUEST, "invalid request")
    rpc_id = body.get("id")  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    method = body.get("method")  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    params = body.get("params", {})  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    if body.get("jsonrpc") != "2.0" or not isinstance(method, str) or not isinstance(params, dict):  # pyright: ignore[reportUnknownMemberType]
        return _rpc_error(rpc_id, INVALID_REQUEST, "invalid request")
    try:
        result = await _service(request, services).dispatch(method, params)  # pyright: ignore[reportUnknownArgumentType]
    except RpcError as exc:
        return _rpc_error(rpc_id, exc.code, exc.message)
    except Exception as exc:
        logger.exception("a2a {} failed", method)
        return _rpc_error(rpc_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
    return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "result": result})
