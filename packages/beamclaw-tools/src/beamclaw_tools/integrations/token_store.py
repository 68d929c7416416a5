"""Tokens encrypted at rest: one Fernet-encrypted JSON file under the BeamClaw home.

Invariants:

* The file never holds a token in plaintext: its content is a Fernet token (AES-128-CBC
  + HMAC-SHA256) under a key kept in a separate key file.
* The key file and the store are created with mode 0600 (their directories 0700); a key
  file readable by group or others is refused, like ssh's private keys.
* Every write is atomic and durable (temporary file, ``fsync``, ``rename``, ``fsync`` of
  the directory): a kill -9 at any moment leaves either the old or the new content.
* Read-modify-write runs under an exclusive ``flock`` on a sibling lock file, so the
  gateway (OAuth callback, refresh) and the CLI (connect, revoke) never lose each other's
  updates.
* Every token read is registered with the scrubber, so it is redacted wherever it would
  appear (logs, events, tool results, LLM payloads).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from cryptography.fernet import Fernet, InvalidToken
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from beamclaw_obs import register_secret
from beamclaw_tools.integrations.errors import TokenStoreError
from beamclaw_tools.integrations.tokens import PendingAuthorisation, Service, StoredToken

T = TypeVar("T")


class StoreContent(BaseModel):
    """The decrypted content of the store."""

    model_config = ConfigDict(extra="forbid")

    tokens: dict[Service, StoredToken] = Field(default_factory=dict[Service, StoredToken])
    pending: dict[str, PendingAuthorisation] = Field(
        default_factory=dict[str, PendingAuthorisation]
    )


def _plain(content: StoreContent) -> bytes:
    def reveal(value: Any) -> Any:
        if hasattr(value, "get_secret_value"):
            return value.get_secret_value()
        return value

    data = {
        "tokens": {
            name: {key: reveal(getattr(token, key)) for key in StoredToken.model_fields}
            for name, token in content.tokens.items()
        },
        "pending": {
            state: {key: reveal(getattr(p, key)) for key in PendingAuthorisation.model_fields}
            for state, p in content.pending.items()
        },
    }
    return json.dumps(data, separators=(",", ":")).encode()


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _check_private(path: Path) -> None:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenStoreError(f"{path} is readable by other users: chmod 600 {path}")


class TokenStore:
    """The encrypted token file at ``path``, keyed by the Fernet key at ``key_path``."""

    def __init__(self, path: Path, key_path: Path) -> None:
        self.path = path
        self.key_path = key_path
        self._fernet: Fernet | None = None

    # ---------------------------------------------------------------- key and file
    def _key(self) -> Fernet:
        if self._fernet is not None:
            return self._fernet
        try:
            if not self.key_path.exists():
                self.key_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                _write_private(self.key_path, Fernet.generate_key())
            _check_private(self.key_path)
            self._fernet = Fernet(self.key_path.read_bytes().strip())
        except ValueError as e:
            raise TokenStoreError(f"{self.key_path} is not a valid key: {e}") from e
        except OSError as e:
            raise TokenStoreError(f"cannot use key file {self.key_path}: {e.strerror}") from e
        return self._fernet

    @contextmanager
    def _locked(self) -> Generator[None]:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self) -> StoreContent:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return StoreContent()
        except OSError as e:
            raise TokenStoreError(f"cannot read {self.path}: {e.strerror}") from e
        _check_private(self.path)
        try:
            plain = self._key().decrypt(raw)
        except InvalidToken as e:
            raise TokenStoreError(
                f"{self.path} cannot be decrypted with {self.key_path} (wrong key or damaged "
                "file); remove both and reconnect the integrations"
            ) from e
        try:
            content = StoreContent.model_validate_json(plain)
        except ValidationError as e:
            raise TokenStoreError(f"{self.path} holds unexpected content: {e}") from e
        for token in content.tokens.values():
            register_secret(token.access_token.get_secret_value())
            if token.refresh_token is not None:
                register_secret(token.refresh_token.get_secret_value())
        return content

    def _write(self, content: StoreContent) -> None:
        try:
            _write_private(self.path, self._key().encrypt(_plain(content)))
        except OSError as e:
            raise TokenStoreError(f"cannot write {self.path}: {e.strerror}") from e

    # ---------------------------------------------------------------- public surface
    def load(self) -> StoreContent:
        """The current content (empty when the file does not exist yet)."""
        with self._locked():
            return self._read()

    def update(self, change: Callable[[StoreContent], T]) -> T:
        """Apply ``change`` to the content and write it back, under the lock."""
        with self._locked():
            content = self._read()
            result = change(content)
            self._write(content)
            return result

    def get(self, service: Service) -> StoredToken | None:
        return self.load().tokens.get(service)

    def put(self, token: StoredToken) -> None:
        register_secret(token.access_token.get_secret_value())
        if token.refresh_token is not None:
            register_secret(token.refresh_token.get_secret_value())

        def change(content: StoreContent) -> None:
            content.tokens[token.service] = token

        self.update(change)

    def remove(self, service: Service) -> StoredToken | None:
        """Forget a service's token; the removed one (or None)."""
        return self.update(lambda content: content.tokens.pop(service, None))

    def add_pending(
        self, state: str, pending: PendingAuthorisation, *, now: float, ttl: float
    ) -> None:
        """Remember an authorisation link (dropping expired ones)."""

        def change(content: StoreContent) -> None:
            for key in [k for k, p in content.pending.items() if p.created_at + ttl < now]:
                del content.pending[key]
            content.pending[state] = pending

        self.update(change)

    def peek_pending(self, state: str, *, now: float, ttl: float) -> PendingAuthorisation | None:
        """The authorisation for ``state`` if it is known and fresh (not used up)."""
        pending = self.load().pending.get(state)
        return pending if pending is not None and pending.created_at + ttl >= now else None

    def take_pending(self, state: str, *, now: float, ttl: float) -> PendingAuthorisation | None:
        """The authorisation for ``state`` (used once), or None when unknown or expired."""

        def change(content: StoreContent) -> PendingAuthorisation | None:
            pending = content.pending.pop(state, None)
            if pending is None or pending.created_at + ttl < now:
                return None
            return pending

        return self.update(change)
