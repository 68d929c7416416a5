"""Markdown (as models write it) to Telegram HTML, split into messages Telegram accepts.

Pure functions. Invariants:

* Every chunk is valid Telegram HTML on its own: tags open in one chunk are closed at its
  end and reopened at the start of the next, entities (``&amp;``) are never cut.
* Every chunk is at most ``limit`` UTF-16 code units (how Telegram counts its 4,096),
  counting the markup, so the text after parsing is shorter still.
* Each chunk carries its plain text too: what is sent when Telegram refuses the HTML (400).
* Splits prefer a paragraph break, then a line break, then a space.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

LIMIT = 4096

_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+|tg://[^)\s]+|mailto:[^)\s]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(
    r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])|(?<![\w])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w])"
)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_QUOTE = re.compile(r"(?:^&gt; ?.*(?:\n|$))+", re.M)
_TOKEN = re.compile(r"<(/?)([a-z-]+)([^>]*)>|&[#\w]+;|[^<&]+", re.S)
_PLACEHOLDER = "\x00{}\x00"


def tg_len(text: str) -> int:
    """Length as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def markdown_to_html(markdown: str) -> str:
    """Telegram HTML for ``markdown``: code blocks, inline code, bold, italic, strike,
    links, headings (bold) and quotes; anything else is escaped text."""
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return _PLACEHOLDER.format(len(kept) - 1)

    def fence(m: re.Match[str]) -> str:
        lang, body = m.group(1), html.escape(m.group(2).rstrip("\n"), quote=False)
        attr = f' class="language-{lang}"' if lang else ""
        return keep(f"<pre><code{attr}>{body}</code></pre>")

    text = _FENCE.sub(fence, markdown)
    text = _INLINE_CODE.sub(
        lambda m: keep(f"<code>{html.escape(m.group(1), quote=False)}</code>"), text
    )
    text = _LINK.sub(
        lambda m: keep(
            f'<a href="{html.escape(m.group(2))}">{html.escape(m.group(1), quote=False)}</a>'
        ),
        text,
    )
    text = html.escape(text, quote=False)
    text = _HEADING.sub(r"<b>\1</b>", text)
    text = _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", text)
    text = _STRIKE.sub(r"<s>\1</s>", text)
    text = _ITALIC.sub(lambda m: f"<i>{m.group(1) or m.group(2)}</i>", text)
    text = _QUOTE.sub(
        lambda m: (
            "<blockquote>"
            + re.sub(r"^&gt; ?", "", m.group(0).rstrip("\n"), flags=re.M)
            + "</blockquote>"
            + ("\n" if m.group(0).endswith("\n") else "")
        ),
        text,
    )
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text)


def html_to_plain(fragment: str) -> str:
    """The text Telegram would show for ``fragment``, without formatting."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@dataclass(frozen=True, slots=True)
class Chunk:
    html: str
    plain: str


@dataclass
class _Open:
    name: str
    start: str
    """The opening tag as written (with its attributes)."""


def _cut(text: str, room: int) -> int:
    """Where to split ``text`` to keep at most ``room`` UTF-16 units, at a break if one is
    in the second half; at least one character."""
    fit = 0
    used = 0
    for ch in text:
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > room:
            break
        fit += 1
    fit = max(fit, 1)
    window = text[:fit]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at >= fit // 2 and at > 0:
            return at + len(sep)
    return fit


def split_html(markup: str, limit: int = LIMIT) -> list[Chunk]:
    """``markup`` in chunks of at most ``limit`` with balanced tags (module invariants)."""
    chunks: list[Chunk] = []
    stack: list[_Open] = []
    current = ""

    def closing() -> str:
        return "".join(f"</{o.name}>" for o in reversed(stack))

    def flush() -> None:
        nonlocal current
        body = current + closing()
        if html_to_plain(body).strip():
            chunks.append(Chunk(body, html_to_plain(body)))
        current = "".join(o.start for o in stack)

    for m in _TOKEN.finditer(markup):
        token = m.group(0)
        if m.group(2) is not None:  # a tag
            name = m.group(2)
            if m.group(1):
                if stack and stack[-1].name == name:
                    stack.pop()
                    current += token
                continue
            opened = _Open(name, token)
            if tg_len(current) + tg_len(token) + tg_len(closing()) + tg_len(f"</{name}>") > limit:
                flush()
            stack.append(opened)
            current += token
            continue
        if token.startswith("&"):  # an entity: never cut
            if tg_len(current) + tg_len(token) + tg_len(closing()) > limit:
                flush()
            current += token
            continue
        rest = token
        while rest:
            room = limit - tg_len(current) - tg_len(closing())
            if tg_len(rest) <= room:
                current += rest
                break
            if room < max(16, limit // 8) and html_to_plain(current).strip():
                flush()
                continue
            at = _cut(rest, max(room, 1))
            current += rest[:at]
            rest = rest[at:]
            flush()
    current += closing()
    if html_to_plain(current).strip():
        chunks.append(Chunk(current, html_to_plain(current)))
    return chunks


def render(markdown: str, limit: int = LIMIT) -> list[Chunk]:
    """``markdown`` as Telegram HTML chunks (at least one, even for blank text)."""
    chunks = split_html(markdown_to_html(markdown), limit)
    return chunks or [Chunk(html.escape(markdown or "…", quote=False) or "…", markdown or "…")]
