"""The gateways ``bench peers`` drives, each launched in its own process on a free port
with the shared fake upstream as its only model, and how each takes a turn.

* ``beamclaw``: ``beamclaw serve`` (``bench._served``); the session is ``X-Session-Id``,
  the gateway keeps the history, the client sends only the new message.
* ``litellm``: LiteLLM's proxy (``litellm --config``, one worker) from
  ``.bench-peers/litellm``; stateless, so the client sends the whole history each turn.
* ``nanobot``: ``nanobot serve`` (nanobot-ai's OpenAI-compatible API server, aiohttp)
  from ``.bench-peers/nanobot``; the session is the body's ``session_id``, nanobot keeps
  the history (in its workspace) and the client sends only the new message.

A target not installed (``make bench-peers`` installs both) is skipped, and said so.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._served import ROOT, free_port, served_gateway, stop, tree_rss_mb, wait_ready

PEERS = ROOT / ".bench-peers"
READY_TIMEOUT = 300.0

Message = dict[str, str]
Body = Callable[[str, str, list[Message]], tuple[dict[str, Any], dict[str, str]]]
"""(new user text, session id, the history so far) -> (request body, headers)."""

_JSON = {"content-type": "application/json"}


@dataclass
class Running:
    """A launched gateway: its process, chat completions URL and cold start."""

    name: str
    pid: int
    url: str
    ready_seconds: float
    body: Body

    def rss_mb(self) -> float:
        """RSS of the gateway and every process it started."""
        return tree_rss_mb(self.pid)


def _beamclaw_body(
    text: str, session: str, _history: list[Message]
) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"model": "beamclaw/default", "messages": [{"role": "user", "content": text}]}
    return body, {**_JSON, "X-Session-Id": session}


LITELLM_KEY = "sk-bench-master-key-0123456789abcdef"
"""The proxy refuses to start without a master key (``LITELLM_MASTER_KEY``)."""


def _litellm_body(
    text: str, _session: str, history: list[Message]
) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"model": "fake-model", "messages": [*history, {"role": "user", "content": text}]}
    return body, {**_JSON, "authorization": f"Bearer {LITELLM_KEY}"}


def _nanobot_body(
    text: str, session: str, _history: list[Message]
) -> tuple[dict[str, Any], dict[str, str]]:
    return {"messages": [{"role": "user", "content": text}], "session_id": session}, _JSON


def direct_body(
    text: str, _session: str, history: list[Message]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The baseline: the upstream itself, the history carried by the client."""
    return {"model": "fake-model", "messages": [*history, {"role": "user", "content": text}]}, _JSON


@contextmanager
def _process(
    argv: list[str], env: dict[str, str], ready_url: str, log: Path
) -> Generator[tuple[int, float]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc.pid, wait_ready(ready_url, proc, READY_TIMEOUT)
        finally:
            stop(proc)


@contextmanager
def beamclaw(upstream: str) -> Generator[Running]:
    with served_gateway(upstream, lane_idle=600) as gw:
        yield Running(
            "beamclaw",
            gw.pid,
            f"{gw.base_url}/v1/chat/completions",
            gw.ready_seconds,
            _beamclaw_body,
        )


LITELLM_CONFIG = """model_list:
  - model_name: fake-model
    litellm_params:
      model: openai/fake-model
      api_base: {url}
      api_key: sk-bench
"""


@contextmanager
def litellm(upstream: str) -> Generator[Running]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "config.yaml").write_text(LITELLM_CONFIG.format(url=upstream))
        port = free_port()
        env = {
            **os.environ,
            "HOME": str(home),
            "LITELLM_LOG": "ERROR",
            "LITELLM_TELEMETRY": "False",
            # the price map from the installed package, not fetched from GitHub at start
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_MASTER_KEY": LITELLM_KEY,
        }
        argv = [
            str(PEERS / "litellm" / "bin" / "litellm"),
            "--config", str(home / "config.yaml"),
            "--host", "127.0.0.1",
            "--port", str(port),
            "--num_workers", "1",
        ]  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        with _process(argv, env, f"{base}/health/liveliness", home / "log") as (pid, ready):
            yield Running("litellm", pid, f"{base}/v1/chat/completions", ready, _litellm_body)


@contextmanager
def nanobot(upstream: str) -> Generator[Running]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        port = free_port()
        config = {
            "agents": {
                "defaults": {
                    "workspace": str(home / "workspace"),
                    "model": "fake-model",
                    "provider": "custom",
                }
            },
            "providers": {"custom": {"apiKey": "sk-bench", "apiBase": upstream}},
            "api": {"host": "127.0.0.1", "port": port},
        }
        (home / "config.json").write_text(json.dumps(config))
        env = {**os.environ, "HOME": str(home)}
        argv = [
            str(PEERS / "nanobot" / "bin" / "nanobot"),
            "serve", "-c", str(home / "config.json"), "-p", str(port),
        ]  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        with _process(argv, env, f"{base}/health", home / "log") as (pid, ready):
            yield Running("nanobot", pid, f"{base}/v1/chat/completions", ready, _nanobot_body)


TARGETS: dict[str, tuple[Callable[[str], AbstractContextManager[Running]], Path | None]] = {
    "beamclaw": (beamclaw, None),
    "litellm": (litellm, PEERS / "litellm" / "bin" / "litellm"),
    "nanobot": (nanobot, PEERS / "nanobot" / "bin" / "nanobot"),
}
"""Name -> (launcher, the executable that must exist; None: always available)."""
