"""The aiohttp upstream's TLS context trusts what httpx's would, without importing httpx."""

from __future__ import annotations

import ssl
import subprocess
import sys
from pathlib import Path

import certifi
import httpx
import pytest

from beamclaw_core.providers.http_client import ssl_context


def authorities(context: ssl.SSLContext) -> list[str]:
    return sorted(str(c["subject"]) for c in context.get_ca_certs())


@pytest.mark.parametrize("trust_env", [True, False])
def test_the_default_bundle_is_certifis(trust_env: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    ours = ssl_context(trust_env)
    assert authorities(ours) == authorities(httpx.create_ssl_context(trust_env=trust_env))
    assert ours.verify_mode == ssl.CERT_REQUIRED and ours.check_hostname


@pytest.mark.parametrize("trust_env", [True, False])
def test_ssl_cert_file_counts_only_with_trust_env(
    trust_env: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One authority of certifi's bundle, alone in a file: with ``trust_env`` that file is
    the whole trust store, as for httpx; without, the bundle stays certifi's."""
    bundle = Path(certifi.where()).read_text()
    first = bundle[bundle.index("-----BEGIN CERTIFICATE-----") :]
    first = first[: first.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")]
    (tmp_path / "one.pem").write_text(first + "\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "one.pem"))
    ours = ssl_context(trust_env)
    assert authorities(ours) == authorities(httpx.create_ssl_context(trust_env=trust_env))
    assert (len(ours.get_ca_certs()) == 1) is trust_env


def test_the_provider_stack_does_not_load_httpx() -> None:
    code = (
        "import sys, beamclaw_core.providers.registry as r\n"
        "from beamclaw_core.providers import ProviderSettings\n"
        "from beamclaw_core.providers.http_client import build_upstream\n"
        "build_upstream(ProviderSettings())\n"
        "print(sorted({'httpx', 'rich'} & set(sys.modules)))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_the_httpx_transport_still_builds_on_httpx() -> None:
    from beamclaw_core.providers import ProviderSettings
    from beamclaw_core.providers.http_client import build_upstream
    from beamclaw_core.providers.httpx_upstream import HttpxUpstream

    upstream = build_upstream(ProviderSettings(http_transport="httpx"))
    assert isinstance(upstream, HttpxUpstream)
