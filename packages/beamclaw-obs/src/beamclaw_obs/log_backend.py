"""Logging: loguru sinks for JSON lines under ``$BEAMCLAW_HOME/logs/`` and stderr.

:func:`configure_logging` installs the sinks once per process; every record's message is
scrubbed by a loguru patcher before any sink sees it. :class:`LogBackend` turns obs
events into log records (``event=<type>`` plus the event data as ``extra``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loguru import logger

from beamclaw_obs.events import Event
from beamclaw_obs.scrub import scrub, scrub_value

if TYPE_CHECKING:
    from loguru import Record

LOG_FILE_NAME = "beamclaw.jsonl"

_quietest = 0
"""The lowest level any sink takes since :func:`configure_logging` (0 before: loguru's
own sink, or a test's, may take anything)."""
_DEBUG, _WARNING = 10, 30


def _scrub_record(record: Record) -> None:
    record["message"] = scrub(record["message"])
    extra: dict[str, Any] = record["extra"]
    for key, value in list(extra.items()):
        extra[key] = scrub_value(value)


def configure_logging(
    log_dir: Path | None,
    *,
    stderr_level: str = "INFO",
    file_level: str = "DEBUG",
    rotation: str = "10 MB",
    retention: int = 5,
) -> Path | None:
    """Replace loguru's sinks: stderr at ``stderr_level``; JSON lines in ``log_dir``.

    Returns the log file path (``None`` when ``log_dir`` is ``None``).
    """
    global _quietest
    logger.remove()
    logger.configure(patcher=_scrub_record)
    logger.add(
        sys.stderr,
        level=stderr_level.upper(),
        format="<green>{time:HH:mm:ss}</green> <level>{level: <7}</level> {message}",
        colorize=None,
        backtrace=False,
        diagnose=False,
    )
    _quietest = logger.level(stderr_level.upper()).no
    if log_dir is None:
        return None
    _quietest = min(_quietest, logger.level(file_level.upper()).no)
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / LOG_FILE_NAME
    logger.add(
        str(path),
        level=file_level.upper(),
        serialize=True,
        rotation=rotation,
        retention=retention,
        enqueue=False,
        backtrace=False,
        diagnose=False,
    )
    return path


class LogBackend:
    """Writes every obs event as a structured log record (level DEBUG, WARNING for
    errors). Once :func:`configure_logging` has set the sinks, an event below all of their
    levels is dropped before a record is built (a sink added later by hand does not lower
    that bar)."""

    name = "log"

    def handle(self, event: Event) -> None:
        warning = event.type.value.endswith(("_error", "gave_up", "_down"))
        if (_WARNING if warning else _DEBUG) < _quietest:
            return  # no sink takes it: skip building a bound logger and a record
        level = "WARNING" if warning else "DEBUG"
        logger.bind(event=event.type.value, **event.data).log(level, "event {}", event.type.value)

    def close(self) -> None:
        return None
