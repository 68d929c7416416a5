"""Run the fake Bot API standalone: ``python -m beamclaw_gateway.fake_telegram``.

Prints the base URL to point a bot at (``api_base_url``), then serves until interrupted.
Type a line on stdin to push it as a user's message (``<chat_id> <text>``, or just
``<text>`` for chat 42); what the bot sends is printed as it arrives.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from beamclaw_gateway.fake_telegram.server import FakeBotApi


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m beamclaw_gateway.fake_telegram",
        description="Run the fake Telegram Bot API standalone.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081, help="0 picks a free port")
    parser.add_argument("--token", default="123456:TEST")
    parser.add_argument("--username", default="fake_test_bot", help="the bot's @username")
    return parser.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    async with FakeBotApi(
        token=args.token, bot_username=args.username, host=args.host, port=args.port
    ) as tg:
        print(f"fake Telegram Bot API at {tg.base_url} (token {tg.token})", flush=True)
        print("type '<chat_id> <text>' (or '<text>' for chat 42) to send as a user", flush=True)
        loop = asyncio.get_running_loop()
        shown = 0
        reader = loop.run_in_executor(None, sys.stdin.readline)
        while True:
            done, _ = await asyncio.wait({reader}, timeout=0.2)
            for chat_id, message_id in list(tg.state.sent)[shown:]:
                sent = tg.state.sent[(chat_id, message_id)]
                print(f"bot -> {chat_id} #{message_id}: {sent.text or sent.caption or sent.kind}")
                shown += 1
            if not done:
                continue
            line = reader.result()
            if not line:
                return
            _push_line(tg, line.strip())
            reader = loop.run_in_executor(None, sys.stdin.readline)


def _push_line(tg: FakeBotApi, line: str) -> None:
    if not line:
        return
    head, _, rest = line.partition(" ")
    chat_id, text = (int(head), rest) if head.lstrip("-").isdigit() and rest else (42, line)
    tg.push_message(chat_id=chat_id, from_id=chat_id, text=text)


def main(argv: list[str] | None = None) -> None:
    try:
        asyncio.run(_serve(_arguments(argv)))
    except KeyboardInterrupt:
        return


if __name__ == "__main__":
    main()
