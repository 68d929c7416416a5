"""Who the bot answers: pure decisions over the policy, the allowlist and approvals.

Private chats follow ``dm_policy``: ``open`` answers anyone; ``allowlist`` answers the
listed ids/usernames and approved users, and tells anyone else so; ``pairing`` does the
same but gives a stranger a pairing code. Groups follow ``group_policy`` (answered when
the bot is mentioned or replied to, every message, or never) and ``group_allowlist``; a
group is one session of its own, whoever speaks in it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

DmPolicy = Literal["open", "allowlist", "pairing"]
GroupPolicy = Literal["mention", "all", "off"]
Access = Literal["answer", "pair", "refuse", "ignore"]


@dataclass(frozen=True, slots=True)
class Sender:
    """Who sent a message, where."""

    user_id: int
    username: str | None
    chat_id: int
    private: bool
    addressed: bool = False
    """In a group: the bot is mentioned, replied to, or a command names it."""


def listed(sender: Sender, allowlist: Collection[str]) -> bool:
    """``sender``'s id or ``@username`` (case-insensitive) is on ``allowlist``."""
    if str(sender.user_id) in allowlist:
        return True
    if sender.username is None:
        return False
    name = "@" + sender.username.lower()
    return any(entry.lower() == name or entry.lower() == name[1:] for entry in allowlist)


def decide(
    sender: Sender,
    *,
    dm_policy: DmPolicy,
    allowlist: Collection[str],
    approved: bool,
    group_policy: GroupPolicy,
    group_allowlist: Collection[str],
) -> Access:
    """``answer``, ``pair`` (give a pairing code), ``refuse`` (say so) or ``ignore``."""
    if not sender.private:
        if group_policy == "off":
            return "ignore"
        if group_allowlist and str(sender.chat_id) not in group_allowlist:
            return "ignore"
        if group_policy == "mention" and not sender.addressed:
            return "ignore"
        return "answer"
    if dm_policy == "open" or approved or listed(sender, allowlist):
        return "answer"
    return "pair" if dm_policy == "pairing" else "refuse"


def choose_agent(
    *,
    approved_agent: str | None,
    person: str | None,
    account: str,
    agents: Mapping[str, str],
    channel_agent: str | None,
) -> str | None:
    """The agent named for a sender, first found: the one given at pairing, ``agents`` by
    person then by account, the channel's; None: the default agent."""
    return (
        approved_agent
        or (agents.get(person) if person is not None else None)
        or agents.get(account)
        or channel_agent
    )
