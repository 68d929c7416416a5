"""A2A (Agent-to-Agent): ``/.well-known/agent.json`` and JSON-RPC at ``POST /a2a``.

Methods: ``message/send``, ``tasks/get``, ``tasks/cancel``, ``tasks/list``. Task states
follow the A2A rules: ``submitted`` → ``working`` → ``completed`` | ``failed`` |
``canceled``; ``working`` ⇄ ``input-required`` while a tool approval is pending (answer
it with ``message/send`` carrying the task id and the text ``yes``, ``no`` or ``always``).
Terminal states never change. A context (``contextId``) is one BeamClaw session. Every
state change is persisted before it is observable (``gateway_a2a_tasks``).
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime
from typing import Any

from beamclaw_core.conversation import TurnRequest
from beamclaw_core.loop import Accepted, ApprovalRequested, ApprovalResolved, TurnEvent
from beamclaw_core.sessions import SessionAddress, TurnResult
from beamclaw_gateway.errors import RpcError
from beamclaw_gateway.services import GatewayServices

TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})
DECISIONS = {"yes": "yes", "y": "yes", "approve": "yes", "no": "no", "n": "no", "deny": "no"}
DECISIONS["always"] = "always"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _agent_message(text: str, task: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "message",
        "role": "agent",
        "messageId": uuid.uuid4().hex,
        "taskId": task["id"],
        "contextId": task["contextId"],
        "parts": [{"kind": "text", "text": text}],
    }


def session_for_context(context_id: str) -> str:
    return "a2a-" + hashlib.sha256(context_id.encode()).hexdigest()[:32]


class _LiveTask:
    def __init__(self, task: dict[str, Any]) -> None:
        self.task = task
        self.lock = asyncio.Lock()
        self.settled = asyncio.Event()
        """Set on a terminal state or ``input-required`` (a blocking send returns then)."""
        self.pending_request: str | None = None


class A2AService:
    """Runs A2A tasks as BeamClaw turns."""

    def __init__(self, services: GatewayServices) -> None:
        self.services = services
        self._live: dict[str, _LiveTask] = {}

    async def _set_state(self, live: _LiveTask, state: str, message: str | None = None) -> None:
        async with live.lock:
            task = live.task
            if task["status"]["state"] in TERMINAL:
                return
            status: dict[str, Any] = {"state": state, "timestamp": _now()}
            if message is not None:
                agent_msg = _agent_message(message, task)
                status["message"] = agent_msg
                if state in TERMINAL or state == "input-required":
                    task["history"].append(agent_msg)
            task["status"] = status
            await self.services.a2a.save(task)
        if state in TERMINAL or state == "input-required":
            live.settled.set()
        if state in TERMINAL:
            self._live.pop(task["id"], None)

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "message/send":
            return await self.send(params)
        if method == "tasks/get":
            return await self.get(params)
        if method == "tasks/cancel":
            return await self.cancel(params)
        if method == "tasks/list":
            return await self.list(params)
        raise RpcError(METHOD_NOT_FOUND, f"method {method!r} not found")

    # ------------------------------------------------------------ message/send

    async def send(self, params: dict[str, Any]) -> dict[str, Any]:
        message = params.get("message")
        if not isinstance(message, dict):
            raise RpcError(INVALID_PARAMS, "params.message is required")
        text = _text_of(message)  # pyright: ignore[reportUnknownArgumentType]
        config = params.get("configuration") or {}
        blocking = bool(config.get("blocking", True)) if isinstance(config, dict) else True
        task_id = message.get("taskId")  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
        if isinstance(task_id, str):
            return await self._continue(task_id, text, message, blocking)  # pyright: ignore[reportUnknownArgumentType]
        context_id = message.get("contextId")  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
        if not isinstance(context_id, str) or not context_id:
            context_id = uuid.uuid4().hex
        settings = self.services.settings.a2a
        agent = self.services.agents.resolve(settings.agent)
        if agent is None:
            raise RpcError(INTERNAL_ERROR, f"configured A2A agent {settings.agent!r} not found")
        task_id = uuid.uuid4().hex
        history_msg = {**message, "taskId": task_id, "contextId": context_id, "kind": "message"}
        task: dict[str, Any] = {
            "kind": "task",
            "id": task_id,
            "contextId": context_id,
            "status": {"state": "submitted", "timestamp": _now()},
            "history": [history_msg],
            "artifacts": [],
            "metadata": {"agent": agent},
        }
        session_id = session_for_context(context_id)
        await self.services.a2a.create(task, session_id)
        live = _LiveTask(task)
        self._live[task_id] = live

        async def on_event(event: TurnEvent) -> None:
            if isinstance(event, Accepted):
                await self._set_state(live, "working")
            elif isinstance(event, ApprovalRequested):
                live.pending_request = event.request_id
                await self._set_state(
                    live,
                    "input-required",
                    f"Approve tool {event.tool!r} with arguments {event.args}? "
                    "Reply yes, no or always.",
                )
            elif isinstance(event, ApprovalResolved):
                live.pending_request = None
                await self._set_state(live, "working")

        async def on_done(result: TurnResult) -> None:
            await self._finish(live, result)

        turn = await self.services.conversation.send(
            TurnRequest(
                address=SessionAddress(f"a2a:{context_id}", agent, "a2a"),
                content=text,
                session_id=session_id,
                approval_mode="wait",
                drafts=False,  # tasks report states and the final answer, not drafts
            ),
            on_event=on_event,
            on_done=on_done,
        )
        async with live.lock:
            task["metadata"]["turn_id"] = turn.turn_id
            await self.services.a2a.save(task, turn_id=turn.turn_id)
        if blocking:
            await live.settled.wait()
        return _trim(dict(task), params.get("configuration"))

    async def _finish(self, live: _LiveTask, result: TurnResult) -> None:
        if result.status == "completed":
            async with live.lock:
                live.task["artifacts"].append(
                    {
                        "artifactId": uuid.uuid4().hex,
                        "name": "answer",
                        "parts": [{"kind": "text", "text": result.text}],
                    }
                )
            await self._set_state(live, "completed", result.text)
        elif result.status == "failed":
            await self._set_state(live, "failed", result.error_message or "the turn failed")
        else:
            await self._set_state(live, "canceled", result.error_message or "canceled")

    async def _continue(
        self, task_id: str, text: str, message: dict[str, Any], blocking: bool
    ) -> dict[str, Any]:
        live = self._live.get(task_id)
        if live is None:
            found = await self.services.a2a.get(task_id)
            if found is None:
                raise RpcError(TASK_NOT_FOUND, f"task {task_id!r} not found")
            raise RpcError(INVALID_PARAMS, f"task {task_id!r} is {found[0]['status']['state']}")
        task = live.task
        if task["status"]["state"] != "input-required" or live.pending_request is None:
            raise RpcError(INVALID_PARAMS, f"task {task_id!r} is not waiting for input")
        decision = DECISIONS.get(text.strip().lower())
        if decision is None:
            raise RpcError(INVALID_PARAMS, "answer the approval with yes, no or always")
        async with live.lock:
            task["history"].append({**message, "taskId": task_id, "contextId": task["contextId"]})
        live.settled.clear()
        request_id = live.pending_request
        if await self.services.conversation.answer(request_id, decision) != "answered":  # type: ignore[arg-type]
            raise RpcError(INVALID_PARAMS, "the approval is no longer pending")
        if blocking:
            await live.settled.wait()
        return dict(task)

    # ------------------------------------------------------------ tasks/*

    async def get(self, params: dict[str, Any]) -> dict[str, Any]:
        task_id = params.get("id")
        if not isinstance(task_id, str):
            raise RpcError(INVALID_PARAMS, "params.id is required")
        live = self._live.get(task_id)
        if live is not None:
            return _trim(dict(live.task), params)
        found = await self.services.a2a.get(task_id)
        if found is None:
            raise RpcError(TASK_NOT_FOUND, f"task {task_id!r} not found")
        task = found[0]
        if task["status"]["state"] not in TERMINAL:
            # Its consumer ran in a process that stopped: the core recovered the turn
            # (the session history has the outcome), but this task can no longer follow it.
            task["status"] = {
                "state": "failed",
                "timestamp": _now(),
                "message": _agent_message(
                    "interrupted by a gateway restart; the conversation continues in its context",
                    task,
                ),
            }
            await self.services.a2a.save(task)
        return _trim(task, params)

    async def cancel(self, params: dict[str, Any]) -> dict[str, Any]:
        task_id = params.get("id")
        if not isinstance(task_id, str):
            raise RpcError(INVALID_PARAMS, "params.id is required")
        live = self._live.get(task_id)
        if live is None:
            task = await self.get({"id": task_id})
            raise RpcError(TASK_NOT_CANCELABLE, f"task {task_id!r} is {task['status']['state']}")
        await self.services.conversation.stop(session_for_context(live.task["contextId"]))
        try:
            await asyncio.wait_for(live.settled.wait(), 10.0)
        except TimeoutError:
            await self._set_state(live, "canceled", "canceled")
        return dict(live.task)

    async def list(self, params: dict[str, Any]) -> dict[str, Any]:
        size = params.get("pageSize", 50)
        if not isinstance(size, int) or not 1 <= size <= 100:
            raise RpcError(INVALID_PARAMS, "pageSize is 1-100")
        token = params.get("pageToken") or "0"
        if not isinstance(token, str) or not token.isdigit():
            raise RpcError(INVALID_PARAMS, "invalid pageToken")
        offset = int(token)
        context_id = params.get("contextId")
        state = params.get("status")
        tasks, total = await self.services.a2a.list(
            context_id=context_id if isinstance(context_id, str) else None,
            state=state if isinstance(state, str) else None,
            limit=size,
            offset=offset,
        )
        following = offset + len(tasks)
        return {
            "tasks": [_trim(t, params) for t in tasks],
            "totalSize": total,
            "pageSize": size,
            "nextPageToken": str(following) if following < total else "",
        }


def _text_of(message: dict[str, Any]) -> str:
    if message.get("role") != "user":
        raise RpcError(INVALID_PARAMS, "message.role must be 'user'")
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise RpcError(INVALID_PARAMS, "message.parts must be a non-empty list")
    texts = [
        str(p.get("text", ""))  # pyright: ignore[reportUnknownMemberType,reportUnknownArgumentType]
        for p in parts  # pyright: ignore[reportUnknownVariableType]
        if isinstance(p, dict) and p.get("kind", p.get("type")) == "text"  # pyright: ignore[reportUnknownMemberType]
    ]
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        raise RpcError(INVALID_PARAMS, "message has no text part")
    return text


def _trim(task: dict[str, Any], params: Any) -> dict[str, Any]:
    length = params.get("historyLength") if isinstance(params, dict) else None
    if isinstance(length, int) and length >= 0:
        task = {**task, "history": task["history"][-length:] if length else []}
    return task
