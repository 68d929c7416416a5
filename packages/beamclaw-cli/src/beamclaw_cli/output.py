"""Terminal output conventions: colours and progress only on a TTY.

Machine-readable output (``--json``) goes to stdout untouched; progress goes to stderr
and only when stderr is a terminal, so pipes and scripts see exactly the data. Colours
follow rich's detection (off when not a terminal, off with ``NO_COLOR``).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Generator
from datetime import UTC, datetime
from typing import Any


def local_time(epoch: float) -> str:
    """Epoch seconds as local ``YYYY-MM-DD HH:MM:SS`` (tables of sessions, grants)."""
    return datetime.fromtimestamp(epoch, UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def styled(text: str, style: str) -> None:
    """Print ``text`` to stdout, in ``style`` when stdout is a terminal."""
    if not sys.stdout.isatty():
        print(text)
        return
    from rich.console import Console
    from rich.text import Text

    Console(highlight=False).print(Text(text, style=style))


@contextlib.contextmanager
def progress(description: str) -> Generator[Callable[[str], None]]:
    """A spinner with elapsed time on stderr (TTY only); yields ``update(description)``."""
    if not sys.stderr.isatty():
        yield lambda _text: None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)
        yield lambda text: bar.update(task, description=text)
