"""The pure OAuth functions: PKCE, the authorisation URL, token responses, expiry."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import SecretStr

from beamclaw_tools.integrations import OAuthError, ReconnectRequiredError, StoredToken
from beamclaw_tools.integrations.errors import BadResponseError
from beamclaw_tools.integrations.oauth import (
    CALLBACK_PATH,
    GOOGLE_SCOPES,
    authorization_url,
    code_exchange_form,
    needs_refresh,
    pkce_challenge,
    pkce_verifier,
    redirect_uri,
    refresh_form,
    token_from_response,
)


def test_verifier_uses_the_rfc_7636_alphabet_and_length() -> None:
    verifier = pkce_verifier(bytes(range(48)))
    assert 43 <= len(verifier) <= 128
    assert re.fullmatch(r"[A-Za-z0-9\-._~]+", verifier)
    assert pkce_verifier(bytes(range(32))) != verifier
    with pytest.raises(ValueError, match="32 bytes"):
        pkce_verifier(b"short")


def test_challenge_is_unpadded_base64url_sha256() -> None:
    from cryptography.hazmat.primitives import hashes

    verifier = pkce_verifier(b"\x01" * 32)
    digest = hashes.Hash(hashes.SHA256())
    digest.update(verifier.encode())
    import base64

    expected = base64.urlsafe_b64encode(digest.finalize()).decode().rstrip("=")
    assert pkce_challenge(verifier) == expected
    assert "=" not in expected and len(expected) == 43


def test_authorization_url_asks_one_offline_read_only_consent_with_pkce() -> None:
    url = authorization_url(
        "https://accounts.example/auth",
        client_id="cid",
        redirect_uri=redirect_uri("https://agent.example/"),
        state="st",
        challenge="ch",
    )
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert parts.netloc == "accounts.example"
    assert query["redirect_uri"] == "https://agent.example" + CALLBACK_PATH
    assert query["scope"].split() == list(GOOGLE_SCOPES)
    assert all(scope.endswith(".readonly") for scope in GOOGLE_SCOPES)
    assert query["code_challenge_method"] == "S256"
    assert query["code_challenge"] == "ch"
    assert query["access_type"] == "offline"
    assert query["state"] == "st"
    assert query["response_type"] == "code"


def test_forms_carry_the_verifier_and_the_refresh_token() -> None:
    form = code_exchange_form(
        code="c", verifier="v", client_id="id", client_secret="s", redirect_uri="r"
    )
    assert form == {
        "grant_type": "authorization_code",
        "code": "c",
        "code_verifier": "v",
        "client_id": "id",
        "client_secret": "s",
        "redirect_uri": "r",
    }
    assert "client_secret" not in refresh_form(
        refresh_token="t", client_id="id", client_secret=None
    )


def _previous() -> StoredToken:
    return StoredToken(
        service="google",
        access_token=SecretStr("old-access"),
        refresh_token=SecretStr("keep-me"),
        expires_at=100.0,
        scopes=("a",),
        obtained_at=0.0,
        account="me@example.org",
    )


def test_a_refresh_answer_without_refresh_token_keeps_the_old_one() -> None:
    fresh = token_from_response(
        200,
        {"access_token": "new", "expires_in": 3599, "token_type": "Bearer"},
        now=1000.0,
        previous=_previous(),
    )
    assert fresh.access_token.get_secret_value() == "new"
    assert fresh.refresh_token is not None and fresh.refresh_token.get_secret_value() == "keep-me"
    assert fresh.expires_at == 4599.0
    assert fresh.scopes == ("a",) and fresh.account == "me@example.org"
    assert "new" not in repr(fresh) and "keep-me" not in repr(fresh)


def test_token_errors_are_told_apart() -> None:
    refused = {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
    with pytest.raises(ReconnectRequiredError, match="reconnect"):
        token_from_response(400, refused, now=0.0, previous=_previous())
    with pytest.raises(OAuthError, match="invalid_grant"):
        token_from_response(400, refused, now=0.0)
    with pytest.raises(BadResponseError):
        token_from_response(200, ["not", "an", "object"], now=0.0)
    with pytest.raises(BadResponseError, match="access_token"):
        token_from_response(200, {"token_type": "Bearer"}, now=0.0)


def test_refresh_is_due_within_the_margin() -> None:
    token = _previous()
    assert not needs_refresh(token, now=0.0, margin=50.0)
    assert needs_refresh(token, now=60.0, margin=50.0)
    assert needs_refresh(token, now=200.0, margin=0.0)
    forever = token.model_copy(update={"expires_at": None})
    assert not needs_refresh(forever, now=1e12, margin=50.0)
