"""Markdown → Telegram HTML and its chunking (pure), checked with the fake's strict parser."""

from __future__ import annotations

import pytest

from beamclaw_gateway.fake_telegram import parse_html
from beamclaw_gateway.telegram.render import markdown_to_html, render, tg_len


def test_markdown_becomes_telegram_html() -> None:
    html = markdown_to_html(
        "# Title\n**bold** *it* ~~gone~~ `a<b` [link](https://x.y/?a=1&b=2)\n"
        "```py\nif a < b:\n    pass\n```\n> quoted\nsnake_case and 2*3*4 & <tags>"
    )
    text, entities = parse_html(html)
    kinds = [e["type"] for e in entities]
    assert kinds[:2] == ["bold", "bold"]
    assert {"italic", "strikethrough", "code", "text_link", "pre", "blockquote"} <= set(kinds)
    assert "snake_case and 2*3*4 & <tags>" in text
    assert "if a < b:" in text


@pytest.mark.parametrize(
    "markdown",
    [
        "**" + "word " * 3000 + "end**",
        "`" + "x" * 9000 + "`",
        "```\n" + "line &<>\n" * 1500 + "```",
        "*a* " + "😀" * 5000,
        "[t](https://e.com) " + "&" * 6000,
        "plain " * 2000,
    ],
)
def test_every_chunk_fits_and_parses_on_its_own(markdown: str) -> None:
    chunks = render(markdown, 4096)
    assert len(chunks) >= 2
    for chunk in chunks:
        assert tg_len(chunk.html) <= 4096
        text, _entities = parse_html(chunk.html)  # raises on unbalanced tags or cut entities
        assert text == chunk.plain
    whole = "".join(c.plain for c in chunks)
    expected, _ = parse_html(markdown_to_html(markdown))
    assert whole.replace("\n", "").replace(" ", "") == expected.replace("\n", "").replace(" ", "")


def test_formatting_continues_across_a_split() -> None:
    first, second = render("**" + "a " * 3000 + "b**", 4096)[:2]
    assert first.html.startswith("<b>") and first.html.endswith("</b>")
    assert second.html.startswith("<b>")


def test_blank_text_still_makes_one_message() -> None:
    assert len(render("")) == 1
