"""Credential scrubbing applied at every boundary (seed 001 "Credential Scrubbing").

``scrub(text)`` replaces secrets with ``[REDACTED]``. It knows four kinds of secret:

1. the literal values of every configured secret, registered with
   :func:`register_secret` when a ``{ env = … }`` secret is resolved;
2. credential formats BeamClaw's own integrations use (Anthropic, OpenRouter, OpenAI
   project keys, Google, Hugging Face, Groq, Brave, Telegram, …) and complete
   private-key blocks;
3. every regex-based detector of the maintained ``detect-secrets`` package (AWS, Azure,
   GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, npm, PyPI, Discord, credentials in
   URLs, …), read from its plugin classes the first time :func:`scrub` runs — not copied,
   so upgrading the package brings new formats. Excluded: the public-IP detector (an
   address is not a credential) and the private-key detector (it matches only the
   ``BEGIN`` line; kind 2 redacts the whole block);
4. the seed's key/value patterns (``api_key=…``, ``token: …``, ``password=…``,
   ``secret=…``, ``Bearer …``, ``Basic …``), where only the value is redacted, the key
   survives, and values that are plainly code (``token: str``, ``password = getpass()``,
   ``api_key=None``, ``${VAR}``) are left alone.

Invariants: idempotent (``scrub(scrub(x)) == scrub(x)``: passes repeat until nothing
changes, and no pattern matches the marker); never raises (on an internal failure the
whole text is replaced by the marker, never returned raw); no registered secret of six
or more characters survives.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REDACTED = "[REDACTED]"
_MARKER_RE = r"\[REDACTED\]"


@dataclass(frozen=True, slots=True)
class _Format:
    """A credential format. ``group`` 0 redacts the whole match, else that group only.

    ``trim`` strips these characters from the ends of the redacted span (detectors that
    match their delimiters along with the secret).
    """

    name: str
    pattern: re.Pattern[str]
    group: int = 0
    trim: str = ""


def _own(name: str, pattern: str, flags: int = 0) -> _Format:
    return _Format(name, re.compile(pattern, flags))


_NOT_AFTER = r"(?<![A-Za-z0-9_-])"  # a token starts a word: "task-…" is not "sk-…"

# Kind 2: formats of the services BeamClaw talks to (checked before detect-secrets).
_OWN_FORMATS: tuple[_Format, ...] = (
    _own(
        "private key block",
        r"-{4,5} ?BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)? ?-{4,5}"
        r"(?:[\s\S]*?-{4,5} ?END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)? ?-{4,5}"
        r"|[A-Za-z0-9+/=\s:,.-]*)",  # a block cut short: redact what follows the header
    ),
    _own("PuTTY private key", r"Private-Lines: *\d+\r?\n(?:[A-Za-z0-9+/=]+\r?\n?)+"),
    _own("Anthropic key", _NOT_AFTER + r"sk-ant-[A-Za-z0-9_-]{8,}"),
    _own("OpenRouter key", _NOT_AFTER + r"sk-or-v1-[A-Za-z0-9]{16,}"),
    # Seed "sk-[A-Za-z0-9]+": OpenAI (legacy, project, service-account, admin), DeepSeek…
    # At least 20 characters and one digit, so "sk-learn" or "sk-learning-rate" are prose.
    _own("OpenAI-style key", _NOT_AFTER + r"sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"),
    _own("GitHub token", _NOT_AFTER + r"gh[pousr]_[A-Za-z0-9]{16,}"),  # seed "ghp_…"
    _own("GitHub fine-grained token", _NOT_AFTER + r"github_pat_[A-Za-z0-9_]{22,}"),
    _own("Slack token", _NOT_AFTER + r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    _own("Slack app token", _NOT_AFTER + r"xapp-[0-9]-[A-Za-z0-9-]{10,}"),
    _own("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    _own("Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    _own("Google OAuth token", _NOT_AFTER + r"ya29\.[0-9A-Za-z_-]{20,}"),
    _own("Stripe key", r"\b[rsp]k_(?:live|test)_[0-9a-zA-Z]{16,}"),
    _own("Telegram bot token", r"\b\d{8,10}:AA[0-9A-Za-z_-]{30,}"),
    _own("GitLab token", r"\bglpat-[0-9A-Za-z_-]{20,}"),
    _own("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    _own("Groq key", r"\bgsk_[A-Za-z0-9]{20,}"),
    _own("Brave Search key", r"\bBSA[A-Za-z0-9_-]{20,}"),
    _own("Perplexity key", r"\bpplx-[A-Za-z0-9]{32,}"),
    _own("xAI key", r"\bxai-[A-Za-z0-9]{32,}"),
    _own("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _own("DigitalOcean token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    _own("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    _own(
        "JSON Web Token",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
)

# Kind 4: the seed's key/value patterns; group "value" is redacted.
_KEYS = (
    r"api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|"
    r"access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token|token|"
    r"client[_-]?secret|secret|password|passwd|passphrase"
)
# Values that are code or placeholders, not secrets: type names and constants, calls and
# subscripts (``getpass()``, ``os.environ["X"]``), ``$VAR``/``${VAR}``, ``<your-key>``,
# ``{ env = … }`` tables and ``{{ template }}`` slots.
_CODE_VALUE = (
    r"(?:str|bytes|int|bool|float|None|null|nil|true|false|undefined|string|number|"
    r"boolean|any|SecretStr|Secret|Optional|Field)(?![A-Za-z0-9_])"
    r"|[A-Za-z_][\w.]*[(\[]"
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?(?![^\s\"',;&])"
    r"|<[^<>\s]+>"
    r"|\{(?:\s|\{)"
)
_KV_FORMATS: tuple[_Format, ...] = (
    _Format(
        "key=value",
        re.compile(
            rf"""(?ix)
            (?<![A-Za-z0-9])(?:{_KEYS})       # the key; "DB_PASSWORD" counts, "max_tokens" not
            ["']?\s*[:=]\s*                   # separator, maybe after a closing quote
            (?!{_MARKER_RE})(?!(?:{_CODE_VALUE}))
            (?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\s"',;&)}}\]]+))
            """
        ),
    ),
    # Case-sensitive, and the value must look like a credential (a digit or punctuation,
    # or 20+ letters), so "Bearer token" and "basic understanding" stay prose.
    _Format(
        "Bearer",
        re.compile(
            rf"\bBearer\s+(?!{_MARKER_RE})"
            r"(?P<bare>(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}"
            r"|[A-Za-z]{20,})"
        ),
    ),
    _Format(
        "Basic",
        re.compile(
            rf"\bBasic\s+(?!{_MARKER_RE})"
            r"(?P<bare>(?=[A-Za-z0-9+/=]*(?:[0-9+/=]|[a-z][A-Z]))[A-Za-z0-9+/=]{8,})"
        ),
    ),
)

# detect-secrets detectors left out, with the reason in the module docstring.
_EXCLUDED_DETECTORS = frozenset({"IPPublicDetector", "PrivateKeyDetector"})
_DETECTOR_TRIM = " \t\r\n=:\"'"


def _detect_secrets_formats() -> tuple[_Format, ...]:
    """Every regex of every ``RegexBasedDetector`` plugin shipped with detect-secrets."""
    import detect_secrets.plugins as plugins
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[_Format] = []
    for info in sorted(pkgutil.iter_modules(plugins.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{plugins.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                not issubclass(cls, RegexBasedDetector)
                or cls is RegexBasedDetector
                or cls.__module__ != module.__name__
                or cls.__name__ in _EXCLUDED_DETECTORS
                or inspect.isabstract(cls)
            ):
                continue
            name = str(getattr(cls, "secret_type", cls.__name__))
            for pattern in cls().denylist:
                compiled = re.compile(pattern.pattern, pattern.flags)
                found.append(_Format(name, compiled, 1 if compiled.groups else 0, _DETECTOR_TRIM))
    return tuple(found)


_lock = threading.Lock()
_formats: tuple[_Format, ...] | None = None
_compiled: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] | None = None
_literals: frozenset[str] = frozenset()
_literal_re: re.Pattern[str] | None = None

_MIN_LITERAL = 6  # shorter "secrets" would redact ordinary words
_MAX_PASSES = 4


def _all_formats() -> tuple[_Format, ...]:
    global _formats
    formats = _formats
    if formats is None:
        with _lock:
            if _formats is None:
                _formats = _OWN_FORMATS + _detect_secrets_formats()
            formats = _formats
    return formats


def secret_formats() -> tuple[str, ...]:
    """Names of every credential format recognised (for ``doctor`` and the docs), sorted."""
    return tuple(sorted({f.name for f in _all_formats() + _KV_FORMATS}))


def register_secret(value: str) -> None:
    """Remember a configured secret's literal value so it is redacted wherever it appears."""
    global _literals, _literal_re
    if len(value) < _MIN_LITERAL or value in _literals:
        return
    with _lock:
        _literals = _literals | {value}
        ordered = sorted(_literals, key=len, reverse=True)
        # The marker is an alternative of its own so a secret never matches inside it.
        _literal_re = re.compile("|".join([_MARKER_RE, *(re.escape(v) for v in ordered)]))


def forget_secrets() -> None:
    """Drop every registered literal (tests and config reloads)."""
    global _literals, _literal_re
    with _lock:
        _literals = frozenset()
        _literal_re = None


def _redact_span(match: re.Match[str], start: int, end: int) -> str:
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + REDACTED + whole[end - offset :]


def _replacer(fmt: _Format) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        if fmt.group and match.group(fmt.group) is None:
            return match.group(0)
        start, end = match.span(fmt.group)
        span = match.string[start:end]
        if fmt.trim:
            lead = len(span) - len(span.lstrip(fmt.trim))
            span = span.strip(fmt.trim)
            start, end = start + lead, start + lead + len(span)
        if not span or span == REDACTED:
            return match.group(0)
        return _redact_span(match, start, end)

    return replace


def _replace_value(match: re.Match[str]) -> str:
    groups = match.groupdict()
    for group in ("dq", "sq", "bare"):
        if groups.get(group) is not None:
            start, end = match.span(group)
            return _redact_span(match, start, end)
    return match.group(0)


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _rules() -> tuple[_Rule, ...]:
    global _compiled
    rules = _compiled
    if rules is None:
        formats = _all_formats()
        rules = tuple((f.pattern, _replacer(f)) for f in formats) + tuple(
            (f.pattern, _replace_value) for f in _KV_FORMATS
        )
        _compiled = rules
    return rules


def _one_pass(text: str) -> str:
    literal_re = _literal_re
    if literal_re is not None:
        text = literal_re.sub(REDACTED, text)
    for pattern, replace in _rules():
        text = pattern.sub(replace, text)
    return text


def scrub(text: str) -> str:
    """Return ``text`` with every known secret replaced by ``[REDACTED]``. Never raises."""
    if not text:
        return text
    try:
        for _ in range(_MAX_PASSES):
            cleaned = _one_pass(text)
            if cleaned == text:
                return cleaned
            text = cleaned
        return text  # not reached in practice: every pass only removes secret text
    except Exception:  # a scrubber must never break its caller, nor leak on failure
        return REDACTED


def scrub_value(value: Any) -> Any:
    """Scrub every string inside a JSON-like value (dicts, lists, tuples), keys included."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        items: Mapping[Any, Any] = value
        return {(scrub(k) if isinstance(k, str) else k): scrub_value(v) for k, v in items.items()}
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        seq: Sequence[Any] = value
        return [scrub_value(v) for v in seq]
    return value
