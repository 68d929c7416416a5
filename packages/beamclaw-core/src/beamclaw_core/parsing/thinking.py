"""The thinking stripper: keep model reasoning out of user-visible text.

Rules (the behaviour table in ``tests/parsing/test_thinking.py`` spells each one out):

1. ``<think>``, ``<thinking>``, ``<thought>`` and ``<antThinking>`` blocks (any case,
   attributes and inner whitespace tolerated) are removed; their content becomes
   :attr:`StrippedText.reasoning`. Blocks nest by depth.
2. ``<final>`` marks the answer. When the text holds a ``<final>`` tag, only the content of
   final blocks is visible (text outside them is treated as reasoning); the tags themselves
   never show. An unclosed ``<final>`` runs to the end of the text.
3. Code is untouched: tags inside fenced blocks or inline code spans are literal text.
4. Unclosed thinking: an opening tag without its closing tag hides everything after it
   (``unclosed="drop"``, the default) or only the tag (``unclosed="keep"``).
   A closing tag without an opener (templates that open the block inside the prompt,
   e.g. DeepSeek-R1) makes everything before it reasoning.
5. Empty-result fallback: when nothing visible is left but there was reasoning, the
   reasoning is returned as the visible text (``fallback_used=True``) rather than an
   empty reply; pass ``fallback=False`` to get the empty string instead.
6. Text without any of these tags is returned unchanged (identity, no trimming).

Pure functions: no I/O, deterministic, never raise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from beamclaw_core.parsing.code_regions import find_code_regions, inside_code

_QUICK = re.compile(r"<\s*/?\s*(?:think(?:ing)?|thought|antthinking|final)\b", re.IGNORECASE)
_TAG = re.compile(r"<\s*(/?)\s*(think(?:ing)?|thought|antthinking|final)\b[^<>]*>", re.IGNORECASE)

Unclosed = Literal["drop", "keep"]


@dataclass(frozen=True, slots=True)
class StrippedText:
    """The result of :func:`strip_thinking`.

    Attributes:
        text: what the user may see.
        reasoning: the removed thinking, blocks joined by a blank line.
        fallback_used: ``text`` is the reasoning because nothing else was left (rule 5).
    """

    text: str
    reasoning: str = ""
    fallback_used: bool = False


def has_thinking_tags(text: str) -> bool:
    """Cheap check: could :func:`strip_thinking` change ``text``?"""
    return bool(_QUICK.search(text))


def strip_thinking(
    text: str, *, unclosed: Unclosed = "drop", fallback: bool = True
) -> StrippedText:
    """Split ``text`` into visible text and reasoning following the module's rules."""
    if not text or not has_thinking_tags(text):
        return StrippedText(text)
    regions = find_code_regions(text)
    outside: list[str] = []
    finals: list[str] = []
    reasoning: list[str] = []
    current_thought: list[str] = []
    depth = 0
    in_final = False
    saw_final = False
    pos = 0

    def route(segment: str) -> None:
        if not segment:
            return
        if depth > 0:
            current_thought.append(segment)
        elif in_final:
            finals.append(segment)
        else:
            outside.append(segment)

    for m in _TAG.finditer(text):
        if inside_code(m.start(), regions):
            continue
        route(text[pos : m.start()])
        pos = m.end()
        closing = m.group(1) == "/"
        is_final = m.group(2).lower() == "final"
        if is_final:
            if depth == 0:
                in_final = not closing
                saw_final = saw_final or not closing
            continue
        if not closing:
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                reasoning.append("".join(current_thought).strip())
                current_thought.clear()
        else:
            # a closing tag with no opener: what came before it was thinking
            reasoning.append("".join(outside).strip())
            outside.clear()
    tail = text[pos:]
    if depth > 0 and unclosed == "keep":
        depth = 0
        outside_or_final = finals if in_final else outside
        outside_or_final.append("".join(current_thought) + tail)
        current_thought.clear()
    else:
        route(tail)
    if current_thought:
        reasoning.append("".join(current_thought).strip())
    if saw_final:
        leftover = "".join(outside).strip()
        if leftover:
            reasoning.append(leftover)
        visible = "".join(finals).strip()
    else:
        visible = "".join(outside).strip()
    thought = "\n\n".join(r for r in reasoning if r)
    if not visible and thought and fallback:
        return StrippedText(thought, thought, fallback_used=True)
    return StrippedText(visible, thought)
