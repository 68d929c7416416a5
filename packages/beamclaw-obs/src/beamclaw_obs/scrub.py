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
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

REDACTED = "[REDACTED]"
_MARKER_RE = r"\[REDACTED\]"


@dataclass(frozen=True, slots=True)
class _Format:
    """A credential format: a regex's source and flags, compiled when first needed.

    ``group`` 0 redacts the whole match, None the first group when the pattern has one
    (else the whole match), any other number that group only. ``trim`` strips these
    characters from the ends of the redacted span (detectors that match their delimiters
    along with the secret).
    """

    name: str
    source: str
    flags: int = 0
    group: int | None = 0
    trim: str = ""
    per_line: bool = False
    """Apply line by line, only to lines holding a trigger (detect-secrets' own semantics)."""
    triggers: frozenset[str] | None = None
    """Case-folded literals one of which every match's line holds; None: read the regex."""


def _own(name: str, pattern: str, flags: int = 0) -> _Format:
    return _Format(name, pattern, flags)


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

# Kind 4: the seed's key/value patterns. The regex finds a separator and the value after
# it; the replacement then checks that the word before the separator is a key. Starting at
# ``:``/``=`` keeps the scan fast; a key is a word of its own or the last part of a
# compound (``DB_PASSWORD``, ``x-api-key``, ``githubToken``), never a bare suffix
# (``mytoken``).
_KEY_WORDS: frozenset[str] = frozenset(
    f"{head}{joint}{tail}"
    for head, tail in (
        ("api", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("private", "key"),
        ("access", "token"),
        ("auth", "token"),
        ("refresh", "token"),
        ("id", "token"),
        ("client", "secret"),
    )
    for joint in ("", "_", "-")
) | {"token", "secret", "password", "passwd", "passphrase"}
_KEY_TRIGGERS = frozenset({"key", "token", "secret", "pass"})
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
# Values that are code or placeholders, not secrets: type names and constants, calls and
# subscripts (``getpass()``, ``os.environ["X"]``), ``$VAR``/``${VAR}``, ``<your-key>``,
# ``{ env = … }`` tables, ``{{ template }}`` slots and comparisons (``==``).
_CODE_VALUE = (
    r"(?:str|bytes|int|bool|float|None|null|nil|true|false|undefined|string|number|"
    r"boolean|any|SecretStr|Secret|Optional|Field)(?![A-Za-z0-9_])"
    r"|[A-Za-z_][\w.]*[(\[]"
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?(?![^\s\"',;&])"
    r"|<[^<>\s]+>"
    r"|\{(?:\s|\{)"
    r"|="
)
_KV_FORMATS: tuple[_Format, ...] = (
    _Format(
        "key=value",
        rf"""(?ix)
        [:=][ \t]*                       # separator (the key is checked when replacing)
        (?!{_MARKER_RE})(?!(?:{_CODE_VALUE}))
        (?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\s"',;&)}}\]]+))
        """,
        per_line=True,
        triggers=_KEY_TRIGGERS,
    ),
    # Case-sensitive, and the value must look like a credential (a digit or punctuation,
    # or 20+ letters), so "Bearer token" and "basic understanding" stay prose.
    _Format(
        "Bearer",
        rf"\bBearer\s+(?!{_MARKER_RE})"
        r"(?P<bare>(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}"
        r"|[A-Za-z]{20,})",
    ),
    _Format(
        "Basic",
        rf"\bBasic\s+(?!{_MARKER_RE})"
        r"(?P<bare>(?=[A-Za-z0-9+/=]*(?:[0-9+/=]|[a-z][A-Z]))[A-Za-z0-9+/=]{8,})",
    ),
)

# detect-secrets detectors left out, with the reason in the module docstring.
_EXCLUDED_DETECTORS = frozenset({"IPPublicDetector", "PrivateKeyDetector"})
_DETECTOR_TRIM = " \t\r\n=:\"'"


DetectorPattern = tuple[str, str, int]
"""One detect-secrets regex: (its detector's ``secret_type``, the pattern's source, its
``re`` flags)."""


def derive_detect_secrets_patterns() -> tuple[DetectorPattern, ...]:
    """Every regex of every ``RegexBasedDetector`` plugin of the installed detect-secrets,
    minus the excluded detectors, in plugin-module then class-name order.

    Imports detect-secrets and each plugin module (requests included): ~0.2 s, so
    :func:`scrub` reads the shipped table (:mod:`beamclaw_obs.scrub_formats`) instead
    when the installed version is the one it was generated from.
    """
    import inspect
    import pkgutil

    import detect_secrets.plugins as plugins
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[DetectorPattern] = []
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
            found.extend((name, p.pattern, int(p.flags)) for p in cls().denylist)
    return tuple(found)


def installed_detect_secrets() -> str | None:
    """The installed detect-secrets' version, read from its metadata (the package itself
    is not imported), or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("detect-secrets")
    except PackageNotFoundError:
        return None


def detect_secrets_patterns(installed: str | None) -> tuple[DetectorPattern, ...]:
    """detect-secrets' patterns for version ``installed``: the shipped table when it was
    generated from that very version, else derived from the package (so an upgrade never
    silently loses a format, and a missing package fails as deriving does)."""
    from beamclaw_obs import scrub_formats

    if installed is not None and installed == scrub_formats.DETECT_SECRETS_VERSION:
        return scrub_formats.PATTERNS
    return derive_detect_secrets_patterns()


def _detect_secrets_formats() -> tuple[_Format, ...]:
    """The installed detect-secrets' regex detectors as formats (line by line, trimmed)."""
    found: list[_Format] = []
    for name, source, flags in detect_secrets_patterns(installed_detect_secrets()):
        found.append(_Format(name, source, flags, None, _DETECTOR_TRIM, True))
    return tuple(found)


_lock = threading.RLock()
_formats: tuple[_Format, ...] | None = None
_compiled: tuple[_Rule, ...] | None = None
_literals: frozenset[str] = frozenset()
_literal_re: re.Pattern[str] | None = None

_detect_secrets_error: str | None = None

_MIN_LITERAL = 6  # shorter "secrets" would redact ordinary words
_MAX_PASSES = 4


def _all_formats() -> tuple[_Format, ...]:
    global _formats
    formats = _formats
    if formats is None:
        with _lock:
            if _formats is None:
                global _detect_secrets_error
                try:
                    derived = _detect_secrets_formats()
                except Exception as exc:  # a broken optional source must not stop scrubbing
                    derived = ()
                    _detect_secrets_error = f"{type(exc).__name__}: {exc}"
                _formats = _OWN_FORMATS + derived
            formats = _formats
    return formats


def secret_formats() -> tuple[str, ...]:
    """Names of every credential format recognised (for ``doctor`` and the docs), sorted."""
    return tuple(sorted({f.name for f in _all_formats() + _KV_FORMATS}))


def detect_secrets_error() -> str | None:
    """Why detect-secrets' formats could not be loaded (scrubbing then goes on without
    them), or None when they were. For ``beamclaw doctor``."""
    _all_formats()
    return _detect_secrets_error


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
        _scrub_short.cache_clear()


def forget_secrets() -> None:
    """Drop every registered literal (tests and config reloads)."""
    global _literals, _literal_re
    with _lock:
        _literals = frozenset()
        _literal_re = None
        _scrub_short.cache_clear()


def _redact_span(match: re.Match[str], start: int, end: int) -> str:
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + REDACTED + whole[end - offset :]


def _replacer(fmt: _Format) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        group = fmt.group
        if group is None:
            group = 1 if match.re.groups else 0
        if group and match.group(group) is None:
            return match.group(0)
        start, end = match.span(group)
        span = match.string[start:end]
        if fmt.trim:
            lead = len(span) - len(span.lstrip(fmt.trim))
            span = span.strip(fmt.trim)
            start, end = start + lead, start + lead + len(span)
        if not span or span == REDACTED:
            return match.group(0)
        return _redact_span(match, start, end)

    return replace


def _word_before(text: str, separator: int) -> str:
    """The word ending just before ``separator``, past blanks and one closing quote."""
    end = separator
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end > 0 and text[end - 1] in "\"'":
        end -= 1
    start = end
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    return text[start:end]


def _key_before(text: str, separator: int) -> bool:
    """True when a key (``api_key``, ``DB_PASSWORD``, ``"token"``) ends just before."""
    if separator > 0 and text[separator - 1] in "=!<>":  # ==, !=, <=, >= compare
        return False
    original = _word_before(text, separator)
    word = original.casefold()
    if word in _KEY_WORDS or len(word) != len(original):
        return word in _KEY_WORDS
    for i in range(1, len(word)):  # compounds: DB_PASSWORD, x-api-key, githubToken
        if (original[i - 1] in "_-" or (original[i].isupper() and original[i - 1].islower())) and (
            word[i:] in _KEY_WORDS
        ):
            return True
    return False


def _replace_value(match: re.Match[str]) -> str:
    if match.group(0)[0] in ":=" and not _key_before(match.string, match.start()):
        return match.group(0)
    groups = match.groupdict()
    for group in ("dq", "sq", "bare"):
        if groups.get(group) is not None:
            start, end = match.span(group)
            return _redact_span(match, start, end)
    return match.group(0)


# --------------------------------------------------------------------------- triggers
# A rule runs only when the (case-folded) text contains one of its trigger literals:
# strings every match must contain, read from the parsed regex. A 10 KB log line without
# "sk-" never pays for the OpenAI pattern. A rule whose regex yields no literal of two or
# more characters is triggered by its one-character literals (the Telegram bot token's
# ":"), and one that yields none at all always runs.

_MIN_TRIGGER = 2


def _best(options: list[frozenset[str]]) -> frozenset[str] | None:
    """The most selective useful set: longest shortest-literal, then fewest literals."""
    useful = [o for o in options if o and min(len(t) for t in o) >= _MIN_TRIGGER]
    if not useful:
        return None
    return max(useful, key=lambda o: (min(len(t) for t in o), -len(o)))


def _required(items: Any) -> list[frozenset[str]]:
    """Sets of literals, each set holding at least one string every match contains."""
    found: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in items:
        kind = str(op)
        if kind == "LITERAL":
            run.append(chr(av))
            continue
        if run:
            found.append(frozenset({"".join(run)}))
            run = []
        if kind == "SUBPATTERN":
            found.extend(_required(av[-1]))
        elif kind in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"} and av[0] >= 1:
            found.extend(_required(av[2]))
        elif kind == "ATOMIC_GROUP":
            found.extend(_required(av))
        elif kind == "BRANCH":
            union: set[str] = set()
            for alternative in av[1]:
                best = _best(_required(alternative))
                if best is None:
                    union = set()
                    break
                union |= best
            if union:
                found.append(frozenset(union))
    if run:
        found.append(frozenset({"".join(run)}))
    return found


def _triggers(source: str, flags: int) -> tuple[tuple[frozenset[str], ...], bool]:
    """Every useful trigger set of a regex, best first, and whether to fold case.

    A match contains at least one literal of *each* set. Case-insensitive patterns get
    case-folded literals, checked against the case-folded text.
    """
    try:
        parser: Any = importlib.import_module("re._parser")
        parsed = parser.parse(source, flags)
        fold = bool(parsed.state.flags & re.IGNORECASE)
        required = [o for o in _required(parsed.data) if o]
        sets = [o for o in required if min(len(t) for t in o) >= _MIN_TRIGGER]
        if not sets:  # a one-character literal still spares the regex a text without it
            sets = list(dict.fromkeys(required))
    except Exception:  # an unparsable or unusual pattern simply always runs
        return (), False
    sets.sort(key=lambda o: (min(len(t) for t in o), -len(o)), reverse=True)
    if fold:
        sets = [frozenset(t.casefold() for t in o) for o in sets]
    return tuple(sets), fold


class _Rule:
    """A format ready to apply. Its regex is compiled the first time a text holds its
    triggers (most of the ~60 never run on a given log line): a first scrub compiles a
    few patterns, not all of them."""

    __slots__ = ("_compiled", "_flags", "_source", "fold", "per_line", "replace", "triggers")

    def __init__(self, fmt: _Format, replace: Callable[[re.Match[str]], str]) -> None:
        self._source = fmt.source
        self._flags = fmt.flags
        self._compiled: re.Pattern[str] | None = None
        self.replace = replace
        self.triggers: tuple[frozenset[str], ...]
        """Each set must have a literal in the text for the rule to run; () = always run."""
        self.fold: bool
        if fmt.triggers is not None:
            self.triggers, self.fold = (fmt.triggers,), True
        else:
            self.triggers, self.fold = _triggers(fmt.source, fmt.flags)
        self.per_line = (
            fmt.per_line
            and bool(self.triggers)
            and min(len(t) for t in self.triggers[0]) >= _MIN_TRIGGER
        )
        """Applied only to the lines holding its first trigger; a one-character trigger
        (a ``:``, a ``.``) is on most lines, so such a rule runs once over the whole text,
        as a rule without triggers does."""

    @property
    def pattern(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:  # two threads may both compile: the same pattern either way
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled


def _rules() -> tuple[_Rule, ...]:
    global _compiled
    rules = _compiled
    if rules is None:
        with _lock:
            if _compiled is None:
                own = tuple(_Rule(f, _replacer(f)) for f in _all_formats())
                kv = tuple(_Rule(f, _replace_value) for f in _KV_FORMATS)
                _compiled = own + kv
            rules = _compiled
    return rules


def _line_spans(text: str, haystack: str, triggers: frozenset[str]) -> list[tuple[int, int]]:
    """Sorted ``(start, end)`` of the lines of ``text`` whose ``haystack`` holds a trigger."""
    spans: set[tuple[int, int]] = set()
    for trigger in triggers:
        at = haystack.find(trigger)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end == -1 else end
            spans.add((start, end))
            at = haystack.find(trigger, end)
    return sorted(spans)


def _sub_values(pattern: re.Pattern[str], text: str) -> str:
    """``pattern.sub(_replace_value, text)``, except that a separator following no key
    does not swallow what comes after it: the search resumes one character later, so
    ``Error: password=hunter2`` and ``note: token: abc`` still find the key's value."""
    pieces: list[str] = []
    done = pos = 0
    while (match := pattern.search(text, pos)) is not None:
        if match.group(0)[0] in ":=" and not _key_before(text, match.start()):
            pos = match.start() + 1
            continue
        pieces += [text[done : match.start()], _replace_value(match)]
        done = pos = max(match.end(), match.start() + 1)
    pieces.append(text[done:])
    return "".join(pieces)


def _sub(rule: _Rule, text: str) -> str:
    if rule.replace is _replace_value:
        return _sub_values(rule.pattern, text)
    return rule.pattern.sub(rule.replace, text)


def _apply(rule: _Rule, text: str, folded: str) -> str:
    haystack = folded if rule.fold else text
    for options in rule.triggers:
        if not any(t in haystack for t in options):
            return text
    if not rule.per_line or not rule.triggers or len(haystack) != len(text):
        return _sub(rule, text)
    pieces: list[str] = []
    done = 0
    for start, end in _line_spans(text, haystack, rule.triggers[0]):
        pieces.append(text[done:start])
        pieces.append(_sub(rule, text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _one_pass(text: str) -> str:
    literal_re = _literal_re
    if literal_re is not None and any(v in text for v in _literals):
        text = literal_re.sub(REDACTED, text)
    folded = text.casefold()
    for rule in _rules():
        changed = _apply(rule, text, folded)
        if changed != text:
            text = changed
            folded = text.casefold()
    return text


# ----------------------------------------------------------- for the stream scrubber


def rule_patterns() -> tuple[tuple[re.Pattern[str], bool], ...]:
    """Every rule's pattern, in the order :func:`scrub` applies them, each with whether it
    is a key/value rule (a match starting at ``:`` or ``=`` counts only after a key)."""
    return tuple((r.pattern, r.replace is _replace_value) for r in _rules())


def key_may_end_before(text: str, separator: int) -> bool:
    """True when a key (``api_key``, ``DB_PASSWORD``) ends just before ``separator``, or
    may once an earlier rule has redacted a match: the word there ends with a key word
    (``…FAKEfpassword`` becomes ``[REDACTED]password`` when ``AIza…FAKEf`` is a Google
    key). Never False where :func:`scrub` would find a key."""
    if _key_before(text, separator):
        return True
    word = _word_before(text, separator).casefold()
    return any(word.endswith(key) for key in _KEY_WORDS)


def registered_literals() -> frozenset[str]:
    """The literal secret values registered so far (:func:`register_secret`)."""
    return _literals


SHORT_TEXT = 256
"""Texts up to this length are scrubbed once and remembered (:func:`scrub`)."""
SHORT_CACHE = 1024
"""Short texts remembered. The values that repeat (event types, models, statuses, agent
ids) stay in by use; ids that are new per session, run and request pass through, so a
large cache only keeps finished sessions' ids alive (issue 18: it held ~0.5 KB per
session until its 8,192 entries filled)."""


def scrub(text: str) -> str:
    """Return ``text`` with every known secret replaced by ``[REDACTED]``. Never raises.

    Short texts (ids, names, models, statuses: most of an event's fields, and the same
    ones again and again) are scrubbed once and remembered in an LRU cache that
    registering or forgetting a secret clears.
    """
    if not text:
        return text
    if len(text) <= SHORT_TEXT:
        return _scrub_short(text)
    return _scrub(text)


@lru_cache(maxsize=SHORT_CACHE)
def _scrub_short(text: str) -> str:
    return _scrub(text)


def _scrub(text: str) -> str:
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
