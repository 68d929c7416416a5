"""Cluster mode's pure parts: lease grants against the cache, commands as data."""

from __future__ import annotations

import pytest

from beamclaw_core.cluster import (
    Claim,
    Command,
    CommandDecodeError,
    claim_after,
    command_from_dict,
    renew_interval,
    sweep_interval,
)


def test_a_grant_that_follows_this_nodes_last_keeps_its_cache() -> None:
    assert claim_after("s", None, 0) == Claim("s", 0, stale=False)  # a single node's first
    assert claim_after("s", None, 1) == Claim("s", 1, stale=True)  # loaded while others wrote
    assert claim_after("s", 4, 5) == Claim("s", 5, stale=False)  # nobody in between
    assert claim_after("s", 0, 0) == Claim("s", 0, stale=False)  # a single node
    assert claim_after("s", 4, 7) == Claim("s", 7, stale=True)  # others owned 5 and 6


def test_leases_are_renewed_before_they_can_lapse() -> None:
    assert renew_interval(30.0) == 10.0
    assert sweep_interval(30.0) == 15.0


@pytest.mark.parametrize(
    "command",
    [
        Command("wake", "s"),
        Command("cancel", "s"),
        Command("answer", "s", "req-1", "always"),
        Command("chat", "s", "run-1", text="/new"),
    ],
)
def test_commands_cross_processes_as_dicts(command: Command) -> None:
    assert command_from_dict(command.to_dict()) == command


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "reboot", "session_id": "s"},
        {"kind": "wake"},
        {"kind": "answer", "session_id": "s", "request_id": "r", "decision": "maybe"},
        {"kind": "answer", "session_id": "s", "decision": "yes"},
        {"kind": "chat", "session_id": "s", "request_id": "r"},
        {"kind": "chat", "session_id": "s", "text": "/new"},
    ],
)
def test_what_is_not_a_command_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(CommandDecodeError):
        command_from_dict(data)
