"""Scrubbing a text that arrives in pieces (an LLM's streamed answer), without delay.

:class:`StreamScrubber` releases, after each piece, everything that can no longer become
part of a secret, scrubbed; it holds back only the tail where a match of some scrub
pattern (or a registered literal) could still be in progress, found by running every
pattern's :class:`~beamclaw_obs.scrub_prefix.PrefixAutomaton` over the text. Ordinary
prose is released at once, at most its last word held (one detect-secrets format, the
Mailchimp key, may begin with any lowercase word).

Invariants: the concatenation of everything released (``feed`` … ``finish``) equals
``scrub(whole text)``, and every released prefix is a prefix of it, so no piece ever
holds a secret or the start of one completed later. Work per piece is proportional to
the piece plus the current line (lines already released are dropped; a line longer
than 1 KB keeps only its last 512 released characters as context).
"""

from __future__ import annotations

from functools import lru_cache

from beamclaw_obs.scrub import key_may_end_before, registered_literals, rule_patterns, scrub
from beamclaw_obs.scrub_prefix import NO_THREADS, PrefixAutomata, PrefixAutomaton, Threads

_LONG_LINE = 1024
"""A line longer than this is cut at a space, keeping :data:`_CONTEXT` characters."""
_CONTEXT = 512
"""More than any pattern needs before a match starts (a key before its value, a keyword
detector's lead-in): what a cut long line keeps of its released text."""


def _kv_admit(whole: str, at: int) -> bool:
    """Whether a key/value match may start at ``at``: judged on the raw text, so a word
    that becomes a key only once an earlier rule redacts its start counts too."""
    return whole[at] not in ":=" or key_may_end_before(whole, at)


@lru_cache(maxsize=1)
def _automata() -> PrefixAutomata:
    return PrefixAutomata(
        PrefixAutomaton(p, _kv_admit if kv else None) for p, kv in rule_patterns()
    )


class StreamScrubber:
    """Scrubs a streamed text piece by piece (see the module docstring).

    Example:
        >>> s = StreamScrubber()
        >>> s.feed("Hi, key sk-ant-") + s.feed("api03-FAKEfake09FAKE") + s.finish()
        'Hi, key [REDACTED]'
    """

    def __init__(self) -> None:
        self._automata = _automata()
        self._reset()

    def _reset(self) -> None:
        self._threads: Threads = NO_THREADS
        """Where a match of some pattern may be in progress, earliest start first."""
        self._text = ""
        self._line = 0
        """Where the current line starts: the text before it is released and dropped."""
        self._released = 0
        self._sent = ""
        """``scrub(text[line:released])``: what was released of the current line."""

    def feed(self, piece: str) -> str:
        """Add ``piece``; return the newly safe text, scrubbed ("" while all is held)."""
        if not piece:
            return ""
        start = len(self._text)
        self._text += piece
        whole = self._text
        advance = self._automata.advance
        threads = self._threads
        for at in range(start, len(whole)):
            threads = advance(threads, whole, at)
        self._threads = threads
        hold = threads[1][0] if threads[1] else len(whole)  # earliest start first
        return self._release(min(hold, self._literal_hold()), final=False)

    def finish(self) -> str:
        """Release everything still held, scrubbed; the scrubber starts over empty."""
        out = self._release(len(self._text), final=True)
        self._reset()
        return out

    def _literal_hold(self) -> int:
        """Where a registered literal secret may have begun (a proper prefix at the end)."""
        text = self._text
        hold = len(text)
        room = len(text) - self._released
        for literal in registered_literals():
            for k in range(min(len(literal) - 1, room), 0, -1):
                if text.endswith(literal[:k]):
                    hold = min(hold, len(text) - k)
                    break
        return hold

    def _release(self, cut: int, *, final: bool) -> str:
        if cut <= self._released:
            return ""
        line = self._text[self._line :]
        head = scrub(self._text[self._line : cut])
        if not final and cut < len(self._text) and not scrub(line).startswith(head):
            return ""  # a complete match crosses the cut: wait until it is released whole
        if not head.startswith(self._sent):  # not reached: a released prefix is final
            out = scrub(self._text[self._released : cut])
        else:
            out = head[len(self._sent) :]
        self._sent, self._released = head, cut
        self._drop_released_lines()
        return out

    def _drop_released_lines(self) -> None:
        """Start the line anew after the last released newline (or, in a line longer than
        :data:`_LONG_LINE`, after a space :data:`_CONTEXT` characters back) when scrubbing
        splits there."""
        text = self._text
        cut = text.rfind("\n", self._line, self._released)
        if cut < 0 and self._released - self._line > _LONG_LINE:
            cut = max(text.rfind(" ", self._line, self._released - _CONTEXT), -1)
        if cut < 0:
            return
        before = scrub(text[self._line : cut + 1])
        after = scrub(text[cut + 1 : self._released])
        if before + after == self._sent:
            self._line, self._sent = cut + 1, after
