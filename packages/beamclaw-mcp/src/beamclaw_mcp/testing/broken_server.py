"""A stdio "MCP server" that misbehaves, for tests (stdlib only, so it starts at once).

``python broken_server.py silent`` reads stdin and never answers; ``garbage`` answers
every line with text that is not JSON-RPC and a JSON object that is not a message.
"""

from __future__ import annotations

import sys
import time


def main(mode: str) -> None:
    if mode == "silent":
        for _line in sys.stdin:
            pass
        time.sleep(3600)
    for _line in sys.stdin:
        print("this is not json-rpc", flush=True)
        print('{"jsonrpc": "2.0", "bogus": true}', flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "garbage")
