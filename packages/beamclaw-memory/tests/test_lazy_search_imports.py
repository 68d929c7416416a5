"""numpy and bm25s load with the first search, not with the memory service.

The gateway builds the service at start (``create_memory_service(config.memory,
database)`` in ``beamclaw_gateway.composition``) whether or not anyone searches. Each case
runs in a fresh interpreter, so what ``sys.modules`` holds is what that path imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_DRIVER = """
import asyncio, json, sys
from beamclaw_memory import Database, MemoryCategory, MemorySettings, create_memory_service

def heavy() -> list[str]:
    return sorted(m for m in ("numpy", "bm25s") if m in sys.modules)

async def main() -> None:
    database = Database(sys.argv[1])
    await database.migrate()
    memory = create_memory_service(MemorySettings(), database)  # as the gateway does
    seen = {"built": heavy()}
    await memory.store("default", "coffee", "Alice takes her coffee at the harbour",
                       MemoryCategory.CORE)
    seen["stored"] = heavy()
    await memory.index_workspace("default")  # the stat check before each search
    seen["indexed"] = heavy()
    result = await memory.search("default", "harbour")
    seen["searched"] = heavy()
    seen["hits"] = sorted(h.source or h.key for h in result.hits)
    seen["mode"] = str(result.mode)
    await memory.aclose()
    await database.dispose()
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_the_first_search_loads_numpy_and_bm25s_not_the_service(
    database_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    workspace = home / "agents" / "default"
    workspace.mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Places\n\nThe harbour ferry leaves at nine.\n")
    env = {**os.environ, "BEAMCLAW_HOME": str(home)}
    env.pop("BEAMCLAW_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, database_url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["built"] == seen["stored"] == seen["indexed"] == []
    assert seen["searched"] == ["bm25s", "numpy"]
    assert seen["hits"] == ["coffee", "file:MEMORY.md"]
    assert seen["mode"] == "keyword"  # no embedding provider configured
