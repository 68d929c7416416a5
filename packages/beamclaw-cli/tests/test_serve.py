"""``beamclaw serve`` through the real entry point: serving, Ctrl-C, and every bad input."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from .conftest import BEAMCLAW, Run, free_port


def _wait_health(port: int, proc: subprocess.Popen[str], timeout: float = 30) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"serve exited early: {out}\n{err}")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            if r.status_code == 200:
                body: dict[str, object] = r.json()
                return body
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("gateway did not answer /health in time")


def test_serve_health_metrics_and_clean_ctrl_c(beamclaw_home: Path) -> None:
    port = free_port()
    env = {**os.environ, "BEAMCLAW_PORT": str(port)}
    proc = subprocess.Popen(
        [BEAMCLAW, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        body = _wait_health(port, proc)
        assert body["status"] == "up"
        assert body["event_loop"] == "uvloop"  # [gateway.http] loop = "auto", uvloop installed
        assert httpx.get(f"http://127.0.0.1:{port}/ready").status_code == 200
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        assert "beamclaw_events_total" in metrics
        maps = Path(f"/proc/{proc.pid}/maps")
        deadline = time.monotonic() + 20
        while "aiohttp" not in maps.read_text():  # the provider stack, warmed once listening
            assert time.monotonic() < deadline, "the provider stack was not warmed"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    first = out.splitlines()[:2]  # a fresh home without a key: the first lines say what to do
    assert first[0].startswith("config: packaged defaults"), out
    assert first[1].startswith("LLM provider: openrouter"), out
    assert "OPENROUTER_API_KEY is not set: run `beamclaw onboard`" in first[1]
    assert f"Web page: http://127.0.0.1:{port}/ui/\n" in out  # no token configured: no hint
    assert (beamclaw_home / "beamclaw.db").exists()
    assert (beamclaw_home / "logs" / "beamclaw.jsonl").exists()


def test_serve_names_the_provider_when_key_present(beamclaw_home: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "BEAMCLAW_PORT": str(port),
        "OPENROUTER_API_KEY": "sk-or-v1-testkeytestkeytestkey",
    }
    proc = subprocess.Popen(
        [BEAMCLAW, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_health(port, proc)
        proc.send_signal(signal.SIGTERM)
        out, _err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "key from env:OPENROUTER_API_KEY" in out
    assert "sk-or-v1-testkey" not in out


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_malformed_toml(run_cli: Run, beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True)
    (beamclaw_home / "beamclaw.toml").write_text("[gateway.http\nport = 1\n")
    line = _one_line_error(run_cli("serve"))
    assert "beamclaw.toml" in line and "malformed TOML" in line


def test_wrong_type(run_cli: Run, beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True)
    (beamclaw_home / "beamclaw.toml").write_text("[gateway.http]\nport = 'eighty'\n")
    line = _one_line_error(run_cli("serve"))
    assert "gateway.http.port" in line


def test_unknown_key_warns_but_starts(run_cli: Run, beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True)
    port = free_port()
    (beamclaw_home / "beamclaw.toml").write_text(f"[gateway.http]\nport = {port}\nprot = 1\n")
    proc = subprocess.Popen(
        [BEAMCLAW, "serve"],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_health(port, proc)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "unknown key 'gateway.http.prot' ignored" in err


def test_missing_config_file(run_cli: Run, tmp_path: Path) -> None:
    line = _one_line_error(run_cli("serve", env={"BEAMCLAW_CONFIG": str(tmp_path / "x.toml")}))
    assert "does not exist" in line


def test_public_bind_without_token(run_cli: Run) -> None:
    line = _one_line_error(run_cli("serve", "--host", "0.0.0.0"))
    assert "without a gateway token" in line


def test_port_in_use(run_cli: Run) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = _one_line_error(run_cli("serve", env={"BEAMCLAW_PORT": str(port)}))
    assert "already in use" in line and str(port) in line


def test_unwritable_home(run_cli: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = _one_line_error(
        run_cli(
            "serve", env={"BEAMCLAW_HOME": str(blocker / "home"), "BEAMCLAW_PORT": str(free_port())}
        )
    )
    assert "not writable" in line


def test_unreachable_postgres(run_cli: Run) -> None:
    url = f"postgresql://u:hidden-pass@127.0.0.1:{free_port()}/db"
    line = _one_line_error(
        run_cli("serve", env={"BEAMCLAW_DATABASE_URL": url, "BEAMCLAW_PORT": str(free_port())})
    )
    assert "unavailable" in line and "127.0.0.1" in line
    assert "hidden-pass" not in line


def test_debug_flag_shows_traceback(run_cli: Run, tmp_path: Path) -> None:
    r = run_cli("--debug", "serve", env={"BEAMCLAW_CONFIG": str(tmp_path / "x.toml")})
    assert r.returncode == 1
    assert "Traceback" in r.stderr


def test_version_and_help(run_cli: Run) -> None:
    r = run_cli("version", "--json")
    assert r.returncode == 0
    assert '"beamclaw-core": "0.1.0"' in r.stdout
    assert run_cli("--help").returncode == 0
    assert run_cli("serve", "--help").returncode == 0


@pytest.mark.parametrize("args", [["no-such-command"], ["serve", "--port", "abc"]])
def test_usage_errors_exit_2(run_cli: Run, args: list[str]) -> None:
    r = run_cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
