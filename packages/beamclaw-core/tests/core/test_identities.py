"""One person across channels (issue 19): linked accounts share one history per agent, a
link never merges two histories, an account that brings history gives it to its person,
and links survive a restart."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from beamclaw_core import IdentityConflictError, IdentityError, UnknownAccountError
from beamclaw_core.api import Core
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import Reply, ScriptedProvider

TUI = SessionAddress("local:ann", "default", "tui")
API = SessionAddress("api:ann", "default", "api")
TG = SessionAddress("tg:4242", "default", "telegram")
BOB = SessionAddress("api:bob", "default", "api")


def replies(n: int) -> ScriptedProvider:
    return ScriptedProvider([Reply(f"answer {i}") for i in range(n)])


async def test_linked_accounts_share_one_history(make_core: Callable[..., Core]) -> None:
    core = make_core(replies(6))
    await core.start(maintenance=False)
    assert core.session_id(TUI) != core.session_id(API)
    await core.identities.link("local:ann", "ann")
    await core.identities.link("api:ann", "ann")
    assert core.session_id(TUI) == core.session_id(API)
    first = await core.send(TUI, "from the terminal")
    await first.result()
    second = await core.send(API, "from the API")
    await second.result()
    assert first.session_id == second.session_id
    texts = [m.text for m in await core.history(first.session_id)]
    assert texts == ["from the terminal", "answer 0", "from the API", "answer 1"]
    assert core.session_id(BOB) != first.session_id, "another person stays apart"


async def test_an_account_with_history_gives_it_to_its_new_person(
    make_core: Callable[..., Core],
) -> None:
    core = make_core(replies(4))
    await core.start(maintenance=False)
    before = await core.send(TG, "hello from telegram")
    await before.result()
    link = await core.identities.link("tg:4242", "ann")
    assert link.session_key == "tg:4242"
    await core.identities.link("local:ann", "ann")  # no history yet: joins ann
    after = await core.send(TUI, "and now the terminal")
    await after.result()
    assert after.session_id == before.session_id
    assert (await core.history(after.session_id))[0].text == "hello from telegram"


async def test_a_link_never_merges_two_histories(make_core: Callable[..., Core]) -> None:
    core = make_core(replies(4))
    await core.start(maintenance=False)
    await (await core.send(TUI, "ann's terminal")).result()
    await core.identities.link("local:ann", "ann")
    await (await core.send(TG, "someone on telegram")).result()
    with pytest.raises(IdentityConflictError, match="both"):
        await core.identities.link("tg:4242", "ann")
    await core.identities.link("api:ann", "ann")
    with pytest.raises(IdentityConflictError, match="unlink it first"):
        await core.identities.link("api:ann", "someone-else")
    with pytest.raises(UnknownAccountError):
        await core.identities.unlink("tg:4242")
    with pytest.raises(IdentityError):
        await core.identities.link(" ", "ann")
    assert [(i.account, i.person_id) for i in await core.identities.list()] == [
        ("api:ann", "ann"),
        ("local:ann", "ann"),
    ]
    gone = await core.identities.unlink("api:ann")
    assert gone.person_id == "ann"
    assert core.session_id(API) != core.session_id(TUI), "unlinked: a person of its own"


async def test_links_survive_a_restart(make_core: Callable[..., Core]) -> None:
    core = make_core(replies(1))
    await core.start(maintenance=False)
    await core.identities.link("local:ann", "ann")
    await core.identities.link("api:ann", "ann")
    shared = core.session_id(TUI)
    await core.stop()
    again = make_core(replies(1))
    await again.start(maintenance=False)
    assert again.session_id(API) == shared == again.session_id(TUI)
