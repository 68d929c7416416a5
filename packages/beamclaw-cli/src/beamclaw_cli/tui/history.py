"""Input history: recall with up/down, persisted in ``$BEAMCLAW_HOME/tui_history``.

The file holds one JSON string per line (so multi-line inputs survive), oldest first,
at most ``limit`` entries (older ones are dropped when the file is rewritten). A line
that is not a JSON string is skipped, so a damaged file never stops the TUI. Repeating
the previous entry does not add a duplicate.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DEFAULT_LIMIT = 1000


class InputHistory:
    """Entries plus a cursor; ``previous``/``next`` walk it, keeping the unsent draft."""

    def __init__(self, path: Path | None, limit: int = DEFAULT_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.entries: list[str] = self._load()
        self._cursor = len(self.entries)
        self._draft = ""

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (FileNotFoundError, UnicodeDecodeError, IsADirectoryError):
            return []
        out: list[str] = []
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, str) and value:
                out.append(value)
        return out[-self.limit :]

    def add(self, text: str) -> None:
        """Remember ``text`` (sent input) and reset the cursor to the end."""
        self._cursor = len(self.entries)
        self._draft = ""
        if not text.strip() or (self.entries and self.entries[-1] == text):
            self._cursor = len(self.entries)
            return
        self.entries.append(text)
        self._cursor = len(self.entries)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if len(self.entries) > self.limit:
            self.entries = self.entries[-self.limit :]
            self._cursor = len(self.entries)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(e) + "\n" for e in self.entries), encoding="utf-8")
            os.replace(tmp, self.path)
        else:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(text) + "\n")

    def previous(self, current: str) -> str | None:
        """The entry before the cursor (None at the oldest); ``current`` is kept as draft."""
        if self._cursor == 0:
            return None
        if self._cursor == len(self.entries):
            self._draft = current
        self._cursor -= 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        """The entry after the cursor; the draft after the newest; None past it."""
        if self._cursor >= len(self.entries):
            return None
        self._cursor += 1
        if self._cursor == len(self.entries):
            return self._draft
        return self.entries[self._cursor]
