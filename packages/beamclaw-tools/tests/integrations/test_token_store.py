"""The token store: encrypted at rest, 0600, atomic, pending states used once."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from beamclaw_obs import scrub
from beamclaw_tools.integrations import StoredToken, TokenStore, TokenStoreError
from beamclaw_tools.integrations.tokens import PendingAuthorisation

SECRET_ACCESS = "ya29.very-secret-access-token-abcdef0123456789"
SECRET_REFRESH = "1//very-secret-refresh-token-abcdef0123456789"


def _token() -> StoredToken:
    return StoredToken(
        service="google",
        access_token=SecretStr(SECRET_ACCESS),
        refresh_token=SecretStr(SECRET_REFRESH),
        expires_at=5000.0,
        obtained_at=1000.0,
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_tokens_are_encrypted_and_private(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "integrations" / "tokens.enc", tmp_path / "secrets" / "k.key")
    store.put(_token())
    raw = store.path.read_bytes()
    assert SECRET_ACCESS.encode() not in raw and SECRET_REFRESH.encode() not in raw
    assert b"google" not in raw  # not even which services are connected shows
    assert _mode(store.path) == 0o600
    assert _mode(store.key_path) == 0o600
    assert _mode(store.key_path.parent) == 0o700
    assert not list(store.path.parent.glob(".*.tmp"))  # the atomic write cleaned up

    again = TokenStore(store.path, store.key_path).get("google")
    assert again == _token()


def test_loaded_tokens_are_known_to_the_scrubber(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "t.enc", tmp_path / "k.key")
    store.put(_token())
    TokenStore(store.path, store.key_path).load()
    assert SECRET_ACCESS not in scrub(f"header Bearer {SECRET_ACCESS} and {SECRET_REFRESH}")
    assert SECRET_REFRESH not in scrub(f"refresh={SECRET_REFRESH}")


def test_a_wrong_key_is_a_clear_error(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "t.enc", tmp_path / "k.key")
    store.put(_token())
    other = TokenStore(store.path, tmp_path / "other.key")
    with pytest.raises(TokenStoreError, match="cannot be decrypted"):
        other.load()


def test_a_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "t.enc", tmp_path / "k.key")
    store.put(_token())
    os.chmod(store.key_path, 0o644)
    with pytest.raises(TokenStoreError, match="chmod 600"):
        TokenStore(store.path, store.key_path).load()


def test_remove_forgets_one_service(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "t.enc", tmp_path / "k.key")
    store.put(_token())
    notion = StoredToken(service="notion", access_token=SecretStr("ntn_x" * 5), obtained_at=1.0)
    store.put(notion)
    assert store.remove("google") == _token()
    assert store.remove("google") is None
    assert set(store.load().tokens) == {"notion"}


def test_pending_states_are_used_once_and_expire(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "t.enc", tmp_path / "k.key")
    pending = PendingAuthorisation(
        service="google", verifier=SecretStr("v" * 43), created_at=100.0, redirect_uri="http://x"
    )
    store.add_pending("s1", pending, now=100.0, ttl=60.0)
    store.add_pending("s2", pending, now=100.0, ttl=60.0)
    assert store.take_pending("s1", now=120.0, ttl=60.0) == pending
    assert store.take_pending("s1", now=120.0, ttl=60.0) is None
    assert store.take_pending("s2", now=161.0, ttl=60.0) is None
    assert b"v" * 43 not in store.path.read_bytes()


_WRITER = """
import sys
from pathlib import Path
from pydantic import SecretStr
from beamclaw_tools.integrations import StoredToken, TokenStore

store = TokenStore(Path(sys.argv[1]), Path(sys.argv[2]))
n = 0
while True:
    n += 1
    store.put(StoredToken(service="slack", access_token=SecretStr(f"xoxp-{n:012d}-abcdef"), obtained_at=n))
    if n == 1:
        print("ready", flush=True)  # one write is durable; the next ones race the kill
"""


def test_a_kill_9_mid_write_leaves_a_readable_store(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    store = TokenStore(tmp_path / "t.enc", tmp_path / "k.key")
    store.put(_token())
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(store.path), str(store.key_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        content = TokenStore(store.path, store.key_path).load()
        assert content.tokens["google"] == _token()
        slack = content.tokens["slack"].access_token.get_secret_value()
        assert slack.startswith("xoxp-")
