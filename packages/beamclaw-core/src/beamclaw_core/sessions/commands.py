"""In-chat commands shared by every channel (seed 001 approvals, seed 004 ADR-038/039).

``/new`` (a best-effort memory flush, then a fresh view), ``/reset``, ``/stop``, ``/status``,
``/context``, ``/yes``, ``/no``, ``/always``. Commands never queue behind a turn: they act
at once and answer the sender with a notice. They act through
:class:`~beamclaw_core.sessions.control.LaneControl` only, never the lane's internals.
"""

from __future__ import annotations

from beamclaw_core.loop.inputs import Decision
from beamclaw_core.providers import estimate_message_tokens, estimate_prompt_tokens
from beamclaw_core.sessions.compacting import flush_memory
from beamclaw_core.sessions.control import LaneAccess, LaneControl
from beamclaw_core.sessions.requests import lane_request_builder

_DECISIONS: dict[str, Decision] = {"/yes": "yes", "/no": "no", "/always": "always"}

COMMANDS = ("/new", "/reset", "/stop", "/status", "/context", "/yes", "/no", "/always")


def parse_command(text: str) -> str | None:
    """The command named by ``text`` (``/yes`` …), or None for an ordinary message."""
    word = text.strip().split(maxsplit=1)[0].lower() if text.strip() else ""
    word = word.split("@", 1)[0]  # Telegram's /cmd@botname
    return word if word in COMMANDS else None


async def run_command(lane: LaneControl, command: str) -> str:
    """Perform ``command`` on ``lane`` and return the text to send back."""
    if command in ("/yes", "/no", "/always"):
        pending = lane.pending_approval()
        if pending is None:
            return "No approval is pending."
        decision = _DECISIONS[command]
        lane.answer(pending.request_id, decision)
        verb = {"yes": "Approved", "no": "Denied", "always": "Approved (always)"}[decision]
        return f"{verb}: {pending.pending.name}."
    if command == "/stop":
        running = lane.turn_running()
        cleared = await lane.cancel()
        head = "Stopped the current turn." if running else "Nothing was running."
        return f"{head} Cleared {cleared} queued message{'s' if cleared != 1 else ''}."
    if command in ("/new", "/reset"):
        await lane.cancel("Cancelled by " + command)
        await lane.settle()
        note = await _flush(lane) if command == "/new" else ""
        await lane.reset_view(command)
        return "Started a fresh session." + note if command == "/new" else "Session reset."
    if command == "/status":
        return await _status(lane)
    return await _context(lane)


async def _flush(lane: LaneAccess) -> str:
    """``/new``'s memory flush, best effort: "" or a note for the user that it failed (the
    fresh session starts all the same)."""
    rt = lane.rt
    if rt.tools is None or not rt.settings.agentic_loop.memory_flush:
        return ""
    if not (await lane.view.get()).messages:
        return ""
    outcome = await flush_memory(lane, rt.provider_for(lane.agent_id))
    if outcome.ok:
        return ""
    return (
        f" (The memory flush failed: {outcome.error}. Facts from the previous session may "
        "not have been saved.)"
    )


async def _status(lane: LaneControl) -> str:
    info = lane.info()
    view = await lane.view.get()
    provider = lane.rt.provider_for(lane.agent_id)
    lines = [
        f"Session {info.session_id} (agent {info.agent_id})",
        f"State: {info.state}" + (f" — {info.error}" if info.error else ""),
        f"Queued messages: {info.queued}",
        f"Messages in context: {len(view.messages)}" + (" (+ summary)" if view.summary else ""),
        f"Model: {provider.model}",
        f"Autonomy: {lane.rt.autonomy_for(lane.agent_id).value}",
        f"Always-approved tools: {', '.join(sorted(lane.allowlist)) or 'none'}",
    ]
    return "\n".join(lines)


async def _context(lane: LaneAccess) -> str:
    rt = lane.rt
    provider = rt.provider_for(lane.agent_id)
    window = rt.context_window_for(provider)
    builder, view = await lane_request_builder(lane)
    request = builder.request(view)
    system, history_msgs = builder.system, request.messages[len(builder.system) :]
    tools = request.tools
    skills = sum(estimate_message_tokens(m) for m in system if m.meta.get("kind") == "skills")
    bootstrap = sum(estimate_message_tokens(m) for m in system) - skills
    tool_tokens = estimate_prompt_tokens([], tools) if tools else 0
    history = sum(estimate_message_tokens(m) for m in history_msgs)
    used = bootstrap + skills + tool_tokens + history
    rows = [
        ("bootstrap", bootstrap),
        ("skills", skills),
        ("tools", tool_tokens),
        ("history", history),
        ("free", max(0, window - used)),
    ]
    lines = [f"Context window: {window} tokens (estimated use {used})"]
    lines += [f"  {name:<10} {tokens:>8}  {100 * tokens / window:5.1f}%" for name, tokens in rows]
    return "\n".join(lines)
