"""The process ``bench/instructions.py`` runs under callgrind (not a benchmark itself).

A gateway on 127.0.0.1 with the configured OpenAI provider pointed at the fake server
whose URL is ``argv[1]``, and one client in the same process. After a warm-up it prints
``READY`` and then obeys one line at a time on stdin: ``direct N`` (N direct requests to
the fake server), ``gateway N`` (N one-step, non-streaming turns in fresh sessions),
``quit``; each command answers ``DONE`` once finished and background work has settled,
so the parent can zero and dump callgrind's counters around exactly that work.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import uuid

WARM_UP = 10


async def _main(fake_url: str) -> None:
    from beamclaw_gateway.testing import live_gateway
    from bench.gateway import BODY, GW_BODY, _client, _post, _settle, bench_config

    config = bench_config(fake_url)
    loop = asyncio.get_running_loop()
    async with live_gateway(None, config) as gw, _client() as client:
        gw_url = f"{gw.base_url}/v1/chat/completions"
        direct_url = f"{fake_url}/chat/completions"
        for _ in range(WARM_UP):
            await _post(client, direct_url, BODY, None)
            await _post(client, gw_url, GW_BODY, uuid.uuid4().hex)
        await _settle(gw.runtime.core)
        print("READY", flush=True)
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).split()
            if not line or line[0] == "quit":
                return
            what, count = line[0], int(line[1])
            for _ in range(count):
                if what == "direct":
                    await _post(client, direct_url, BODY, None)
                else:
                    await _post(client, gw_url, GW_BODY, uuid.uuid4().hex)
            await _settle(gw.runtime.core)
            print("DONE", flush=True)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        os.environ["BEAMCLAW_HOME"] = home
        from beamclaw_gateway.server import loop_runner

        _name, run = loop_runner("auto")
        run(_main(sys.argv[1]))
