"""``{ file = "..." }`` secrets: read at use from a 0600 file, scrubbed, never shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beamclaw_obs import MissingSecretError, Secret, scrub
from beamclaw_obs.scrub import forget_secrets


def _key_file(path: Path, value: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n")
    path.chmod(mode)
    return path


def test_a_relative_file_is_read_from_beamclaw_home_at_use(beamclaw_home: Path) -> None:
    forget_secrets()
    secret = Secret.model_validate({"file": "secrets/openai_api_key"})
    assert not secret.is_available()
    with pytest.raises(MissingSecretError, match="secrets/openai_api_key") as err:
        secret.resolve(used_for="provider openai")
    assert "beamclaw onboard" in err.value.fix
    _key_file(beamclaw_home / "secrets" / "openai_api_key", "sk-file-secret-0123456789")
    assert secret.is_available()
    assert secret.resolve() == "sk-file-secret-0123456789"  # trailing newline dropped
    assert "sk-file-secret" not in scrub("key sk-file-secret-0123456789 here")
    assert secret.describe() == "file:secrets/openai_api_key"
    assert "sk-file" not in repr(secret)
    assert secret.model_dump() == {"file": "secrets/openai_api_key"}
    forget_secrets()


def test_a_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = _key_file(tmp_path / "key", "value-abcdef-123456", mode=0o644)
    secret = Secret(file=str(path))
    assert not secret.is_available()
    with pytest.raises(MissingSecretError, match="readable by other users") as err:
        secret.resolve()
    assert f"chmod 600 {path}" in err.value.fix
    os.chmod(path, 0o600)
    assert secret.resolve() == "value-abcdef-123456"


def test_exactly_one_form() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Secret.model_validate({"env": "X", "file": "y"})
    with pytest.raises(ValueError, match="empty"):
        Secret.model_validate({"file": " "})


def test_env_secret_problem_and_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = Secret(env="SOME_TEST_KEY_VAR")
    assert secret.problem() == "environment variable SOME_TEST_KEY_VAR is not set"
    assert secret.fix() == "export SOME_TEST_KEY_VAR=..."
    monkeypatch.setenv("SOME_TEST_KEY_VAR", "v")
    assert secret.problem() is None


def test_a_rotated_or_edited_key_file_is_read_again(tmp_path: Path) -> None:
    """The value is kept while the file is unchanged (a stat per use, not a read), and a
    replaced (renamed into place, as onboard writes) or edited file is read afresh."""
    path = _key_file(tmp_path / "key", "sk-first-key-0123456789")
    secret = Secret(file=str(path))
    assert secret.resolve() == "sk-first-key-0123456789"
    assert secret.resolve() == "sk-first-key-0123456789"
    replacement = _key_file(tmp_path / "key.new", "sk-second-key-0123456789")
    replacement.replace(path)
    assert secret.resolve() == "sk-second-key-0123456789"
    stat_before = path.stat()
    _key_file(path, "sk-third!-key-0123456789")  # same size, edited in place
    os.utime(path, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns + 1_000_000))
    assert secret.resolve() == "sk-third!-key-0123456789"
    path.chmod(0o644)
    with pytest.raises(MissingSecretError, match="readable by other users"):
        secret.resolve()
    forget_secrets()
