"""Which tools a script may call through the bridge, and whether its session's autonomy
and approvals let it (pure).

Rules are ordered ``allow:<glob>`` / ``deny:<glob>`` strings; the first whose glob matches
the tool name decides, and a name no rule matches is denied. The default denies ``exec``
(no sandbox inside a sandbox) and the host shells, and allows the rest.

:func:`approval_refusal` mirrors the loop's approval policy for a call a script makes: a
script cannot answer an approval prompt, so a tool that needs approval runs only with a
standing ``/always`` grant or at ``full`` autonomy.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from beamclaw_sandbox.settings import DEFAULT_BRIDGE_RULES
from beamclaw_tools import Autonomy, SessionRef, ToolDef

DEFAULT_RULES = DEFAULT_BRIDGE_RULES


@dataclass(frozen=True)
class BridgeRule:
    verdict: Literal["allow", "deny"]
    pattern: str

    @classmethod
    def parse(cls, text: str) -> BridgeRule:
        verdict, sep, pattern = text.partition(":")
        if not sep or verdict not in ("allow", "deny") or not pattern:
            raise ValueError(f"bridge rule {text!r} is not 'allow:<glob>' or 'deny:<glob>'")
        return cls("allow" if verdict == "allow" else "deny", pattern)


@dataclass(frozen=True)
class BridgePolicy:
    rules: tuple[BridgeRule, ...]

    @classmethod
    def parse(cls, rules: Sequence[str]) -> BridgePolicy:
        return cls(tuple(BridgeRule.parse(r) for r in rules))

    def permits(self, name: str) -> bool:
        for rule in self.rules:
            if fnmatchcase(name, rule.pattern):
                return rule.verdict == "allow"
        return False


def approval_refusal(session: SessionRef, tool: ToolDef, granted: Collection[str]) -> str | None:
    """Why ``session`` may not run ``tool`` from a script, or None when it may."""
    if not session.autonomy.allows(tool.min_autonomy):
        return (
            f"{tool.name} needs autonomy level {tool.min_autonomy.value}, "
            f"this agent runs at {session.autonomy.value}"
        )
    if not tool.requires_approval:
        return None
    if session.autonomy is Autonomy.READ_ONLY:
        return f"{tool.name} needs approval and this agent is read-only"
    if tool.name in granted or session.autonomy is Autonomy.FULL:
        return None
    return (
        f"{tool.name} needs approval, which a script cannot ask for: "
        "call it as a tool directly (or grant it with /always)"
    )
