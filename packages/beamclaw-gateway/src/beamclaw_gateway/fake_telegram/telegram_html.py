"""Telegram's ``parse_mode=HTML`` parser, as strict as the real one (TDLib's ``parse_html``).

:func:`parse_html` turns the text a bot sends into the plain text and the entities Telegram
would store, or raises :class:`BotApiError` with Telegram's own wording
(``"Bad Request: can't parse entities: Unsupported start tag "br" at byte offset 5"``).

Invariants, as Telegram has them:

* Only ``b strong i em u ins s strike del a code pre blockquote span tg-spoiler tg-emoji``
  are tags; any other ``<`` that opens something (``1 < 2``, ``<br>``) is an error.
* Every start tag needs its end tag, properly nested; ``</>`` closes the innermost tag.
* Only ``&lt; &gt; &amp; &quot;`` and numeric references are entities; any other ``&`` is
  a literal ampersand.
* Error offsets count UTF-8 bytes; entity offsets and lengths count UTF-16 code units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from beamclaw_gateway.fake_telegram.errors import BotApiError

_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "s",
        "strike",
        "del",
        "u",
        "ins",
        "tg-spoiler",
        "tg-emoji",
        "span",
        "pre",
        "code",
        "blockquote",
    }
)
_SIMPLE = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]+);")
_SPACE = " \t\n\r\f\v"


class _HtmlError(Exception):
    """Module-private: a parse error in TDLib's words, wrapped by :func:`parse_html`."""


@dataclass
class _Open:
    tag: str
    start: int
    """UTF-16 offset in the plain text where the tag's content starts."""
    attrs: dict[str, str] = field(default_factory=dict[str, str])


def parse_html(text: str) -> tuple[str, list[dict[str, Any]]]:
    """The plain text and Bot API ``MessageEntity`` dicts of ``text`` (``parse_mode=HTML``).

    Raises:
        BotApiError: 400 ``"Bad Request: can't parse entities: ..."``.
    """
    try:
        return _parse(text)
    except _HtmlError as e:
        raise BotApiError.bad_request(f"can't parse entities: {e}") from None


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (Telegram's unit for entity offsets)."""
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _parse(text: str) -> tuple[str, list[dict[str, Any]]]:
    out: list[str] = []
    length = 0  # UTF-16 length of "".join(out)
    stack: list[_Open] = []
    entities: list[dict[str, Any]] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "&":
            decoded, end = _decode_entity(text, i)
            if decoded is not None:
                out.append(decoded)
                length += utf16_len(decoded)
                i = end
                continue
        if c != "<":
            out.append(c)
            length += utf16_len(c)
            i += 1
            continue
        begin = i
        i += 1
        if i < n and text[i] == "/":
            i = _close_tag(text, begin, stack, entities, length)
        else:
            tag, attrs, i = _open_tag(text, begin)
            stack.append(_Open(tag, length, attrs))
    if stack:
        raise _HtmlError(f'Can\'t find end tag corresponding to start tag "{stack[-1].tag}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _decode_entity(text: str, i: int) -> tuple[str | None, int]:
    match = _ENTITY.match(text, i)
    if match is None:
        return None, i
    name = match.group(1)
    if name.startswith("#"):
        code = int(name[2:], 16) if name[1:2] in ("x", "X") else int(name[1:])
        if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None, i
        return chr(code), match.end()
    decoded = _NAMED.get(name)
    return (decoded, match.end()) if decoded is not None else (None, i)


def _open_tag(text: str, begin: int) -> tuple[str, dict[str, str], int]:
    n = len(text)
    i = begin + 1
    while i < n and text[i] not in _SPACE and text[i] != ">":
        i += 1
    if i >= n:
        raise _HtmlError(f"Unclosed start tag at byte offset {_byte_offset(text, begin)}")
    tag = text[begin + 1 : i].lower()
    where = f"at byte offset {_byte_offset(text, begin)}"
    if tag not in _TAGS:
        raise _HtmlError(f'Unsupported start tag "{tag}" {where}')
    attrs: dict[str, str] = {}
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n:
            raise _HtmlError(f'Unclosed start tag "{tag}" {where}')
        if text[i] == ">":
            i += 1
            break
        name_start = i
        while i < n and text[i] not in _SPACE and text[i] not in "=>":
            i += 1
        name = text[name_start:i].lower()
        if not name:
            raise _HtmlError(f'Empty attribute name in the tag "{tag}" {where}')
        while i < n and text[i] in _SPACE:
            i += 1
        if i < n and text[i] == "=":
            value, i = _attribute_value(text, i + 1, tag, where)
        else:  # a bare attribute (<blockquote expandable>)
            value = ""
        attrs[name] = value
    if tag == "span" and attrs.get("class") != "tg-spoiler":
        raise _HtmlError(f'Tag "span" must have class "tg-spoiler" {where}')
    return tag, attrs, i


def _attribute_value(text: str, i: int, tag: str, where: str) -> tuple[str, int]:
    n = len(text)
    while i < n and text[i] in _SPACE:
        i += 1
    if i >= n:
        raise _HtmlError(f'Unclosed start tag "{tag}" {where}')
    if text[i] in "'\"":
        quote = text[i]
        end = text.find(quote, i + 1)
        if end < 0:
            raise _HtmlError(f'Unclosed start tag "{tag}" {where}')
        return _decode_attribute(text[i + 1 : end]), end + 1
    start = i
    while i < n and (text[i].isalnum() or text[i] in "-_.:/?#=&%+@~"):
        i += 1
    if i == start:
        raise _HtmlError(f"Unexpected end of name token at byte offset {_byte_offset(text, i)}")
    return text[start:i], i


def _decode_attribute(raw: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] == "&":
            decoded, end = _decode_entity(raw, i)
            if decoded is not None:
                out.append(decoded)
                i = end
                continue
        out.append(raw[i])
        i += 1
    return "".join(out)


def _close_tag(
    text: str, begin: int, stack: list[_Open], entities: list[dict[str, Any]], length: int
) -> int:
    n = len(text)
    where = f"at byte offset {_byte_offset(text, begin)}"
    if not stack:
        raise _HtmlError(f"Unexpected end tag {where}")
    i = begin + 2
    while i < n and text[i] not in _SPACE and text[i] != ">":
        i += 1
    name = text[begin + 2 : i]
    while i < n and text[i] in _SPACE:
        i += 1
    if i >= n or text[i] != ">":
        raise _HtmlError(f"Unclosed end tag {where}")
    opened = stack.pop()
    if name and name != opened.tag:
        raise _HtmlError(
            f'Unmatched end tag {where}, expected "</{opened.tag}>", found "</{name}>"'
        )
    _emit(opened, length - opened.start, stack, entities)
    return i + 1


def _emit(opened: _Open, span: int, stack: list[_Open], entities: list[dict[str, Any]]) -> None:
    """Append the entity a closed tag makes (none for an empty span)."""
    if span <= 0:
        return
    entity: dict[str, Any] = {"offset": opened.start, "length": span}
    tag = opened.tag
    if tag in _SIMPLE:
        entity["type"] = _SIMPLE[tag]
    elif tag == "a":
        href = opened.attrs.get("href", "")
        if not href:
            return
        entity["type"] = "text_link"
        entity["url"] = href
    elif tag == "code":
        language = opened.attrs.get("class", "")
        parent = stack[-1] if stack else None
        if language.startswith("language-") and parent is not None and parent.tag == "pre":
            parent.attrs["language"] = language.removeprefix("language-")
            return
        entity["type"] = "code"
    elif tag == "pre":
        entity["type"] = "pre"
        if opened.attrs.get("language"):
            entity["language"] = opened.attrs["language"]
    elif tag == "blockquote":
        expandable = "expandable" in opened.attrs
        entity["type"] = "expandable_blockquote" if expandable else "blockquote"
    else:  # tg-emoji
        entity["type"] = "custom_emoji"
        entity["custom_emoji_id"] = opened.attrs.get("emoji-id", "")
    entities.append(entity)
