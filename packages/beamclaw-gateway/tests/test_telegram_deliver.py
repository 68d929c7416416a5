"""Proactive delivery: ``telegram:<chat id>`` through ``POST /api/deliver`` and the channel
registry (what the scheduler and heartbeats use), text and images."""

from __future__ import annotations

import base64

from beamclaw_core.channels import Outbound
from beamclaw_core.testing import ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_tools import ImagePart

from .telegram_support import telegram_gateway


async def test_deliver_to_a_chat_over_rest_and_with_an_image() -> None:
    async with FakeBotApi() as tg, telegram_gateway(ScriptedProvider([]), tg) as bench:
        tg.add_chat(61)  # a person who talked to the bot before
        async with bench.client() as client:
            r = await client.post(
                "/api/deliver",
                json={"channel": "telegram", "target": "61", "message": "**Reminder**: stand-up"},
            )
            assert r.status_code == 200, r.text
            assert r.json() == {"delivered": 1}
            for target in ("not-a-chat", "999"):  # not a chat id; a chat Telegram does not know
                bad = await client.post(
                    "/api/deliver", json={"channel": "telegram", "target": target, "message": "x"}
                )
                assert bad.status_code == 404, bad.text
        sent = await bench.shows(61, "Reminder: stand-up")
        assert sent.reply_to_message_id is None
        assert sent.entities[0]["type"] == "bold"
        picture = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
        receipt = await bench.gw.app.state.services.channels.deliver(
            "telegram",
            "61",
            Outbound(
                "chart attached",
                attachments=(
                    ImagePart(media_type="image/png", data=base64.b64encode(picture).decode()),
                ),
            ),
        )
        assert receipt.delivered == 1 and len(receipt.message_ids) == 2
        photos = [m for m in tg.messages(61) if m.kind == "photo"]
        assert len(photos) == 1 and photos[0].photo == picture
