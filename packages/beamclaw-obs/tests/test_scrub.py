"""The scrubber: seed patterns, well-known key formats, configured secrets, idempotence,
and no false positives on ordinary prose and code.

Every key below is fake: the right shape, obviously not a credential (FAKE, EXAMPLE,
repeated characters).
"""

from __future__ import annotations

import gc
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from beamclaw_obs import (
    REDACTED,
    Secret,
    forget_secrets,
    register_secret,
    scrub,
    scrub_formats,
    scrub_value,
)
from beamclaw_obs.scrub import (
    derive_detect_secrets_patterns,
    detect_secrets_error,
    detect_secrets_patterns,
    installed_detect_secrets,
    secret_formats,
)


@pytest.fixture(autouse=True)
def _no_registered_secrets() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


def _assert_redacted(text: str, secret: str) -> str:
    out = scrub(text)
    assert secret not in out, (text, out)
    assert REDACTED in out
    return out


# ------------------------------------------------------------------ seed patterns (seed 001)

SEED_CASES = [
    ("OpenAI key sk-", "key sk-abc123def456ghi789jkl012mno", "sk-abc123def456ghi789jkl012mno"),
    ("GitHub PAT ghp_", "use ghp_FAKEfake0123456789FAKEfake0123456789", "ghp_FAKEfake0123456789"),
    ("Bearer", "Authorization: Bearer fake.token-123456", "fake.token-123456"),
    ("api_key=", "api_key=fakevalue42", "fakevalue42"),
    ("api-key:", "api-key: fakevalue42", "fakevalue42"),
    ("apikey=", "apikey=fakevalue42", "fakevalue42"),
    ("token=", "token=abcdef", "abcdef"),
    ("token:", "token: abcdef", "abcdef"),
    ("password=", "password=hunter2", "hunter2"),
    ("password:", "PASSWORD: hunter2", "hunter2"),
    ("secret=", "secret=opensesame", "opensesame"),
]


@pytest.mark.parametrize(("name", "text", "secret"), SEED_CASES, ids=[c[0] for c in SEED_CASES])
def test_seed_patterns(name: str, text: str, secret: str) -> None:
    _assert_redacted(text, secret)


def test_key_value_keeps_the_key() -> None:
    assert scrub("api_key=fakevalue42") == "api_key=[REDACTED]"
    assert scrub("Authorization: Bearer fake.token-123456") == "Authorization: Bearer [REDACTED]"
    assert scrub('{"password": "two words"}') == '{"password": "[REDACTED]"}'
    assert scrub("password='two words'") == "password='[REDACTED]'"
    assert scrub("DB_PASSWORD=hunter2 other=1") == "DB_PASSWORD=[REDACTED] other=1"
    assert scrub("export GITHUB_TOKEN=abcdef") == "export GITHUB_TOKEN=[REDACTED]"
    assert scrub("x-api-key: abcdef123") == "x-api-key: [REDACTED]"
    assert scrub("githubToken: abcdef123") == "githubToken: [REDACTED]"
    assert scrub("accessToken=abcdef123") == "accessToken=[REDACTED]"
    assert scrub("token :abc") == "token :[REDACTED]"


# ------------------------------------------------------------------ added formats

FAKE = "FAKE"
ADDED_CASES = [
    # BeamClaw's own integrations
    ("Anthropic", "sk-ant-api03-" + "FAKEfake09" * 9),
    ("OpenRouter", "sk-or-v1-" + "0f" * 32),
    ("OpenAI project", "sk-proj-" + "FAKEfake12" * 6),
    ("GitHub fine-grained", "github_pat_11" + "FAKE" * 20),
    ("GitHub OAuth", "gho_" + "FAKEfake12" * 4),
    ("Slack bot", "xoxb-1234567890-FAKEFAKEFAKE"),
    ("Slack app", "xapp-1-A0FAKE-1234-" + "f" * 20),
    ("AWS access key id", "AKIAFAKEFAKEFAKE1234"),
    ("Google API key", "AIza" + "FAKE_fake-" * 3 + "FAKEf"),
    ("Google OAuth", "ya29." + "FAKEfake" * 4),
    ("Stripe test", "sk_test_" + "FAKEfake" * 3),
    ("Stripe restricted", "rk_live_" + "FAKEfake" * 3),
    ("Telegram bot", "123456789:AA" + "FAKEfake_-" * 3 + "FAKEf"),
    ("GitLab PAT", "glpat-" + "FAKEfake" * 3),
    ("Hugging Face", "hf_" + "FAKEfake" * 4),
    ("Groq", "gsk_" + "FAKEfake" * 4),
    ("Brave", "BSA" + "FAKEfake" * 3),
    ("Perplexity", "pplx-" + "FAKEfake" * 5),
    ("xAI", "xai-" + "FAKEfake" * 5),
    ("npm", "npm_" + "FAKEfake12" * 3 + "FAKEfa"),
    ("DigitalOcean", "dop_v1_" + "0f" * 32),
    ("Shopify", "shpat_" + "0f" * 16),
    ("JWT", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlIn0.ZmFrZXNpZ25hdHVyZQ"),
    # formats that come from detect-secrets' plugins
    ("AWS secret (detect-secrets)", 'aws_pw = "' + "FAKE/fake+" * 4 + '"'),
    ("Azure storage", "AccountKey=" + "FAKEfake+/" * 8 + "FAKEfake"),
    ("URL credentials", "https://alice:FakePass123@db.example.com/x"),
    ("Cloudant", "cloudant_pwd=" + "0123456789abcdef" * 4),
    ("Discord", "MTAxFAKEFAKEFAKEFAKEFAKE.GhFAKE.FAKEFAKEFAKEFAKEFAKEFAKEFAK"),
    ("GitLab deploy", "gldt-" + "FAKEfake" * 3),
    ("GitLab runner", "glrt-" + "FAKEfake" * 3),
    ("IBM Cloud IAM", "ibm_cloud_iam_key = " + "FAKEfake_-" * 4 + "FAKE"),
    ("IBM COS HMAC", "cos_hmac_secret_key: " + "0123456789abcdef" * 3),
    ("Mailchimp", "0123456789abcdef0123456789abcdef-us12"),
    ("npm authToken", "//registry.npmjs.org/:_authToken=npm_FAKEFAKE"),
    ("OpenAI (T3BlbkFJ)", "sk-" + "A" * 20 + "T3BlbkFJ" + "B" * 20),
    ("PyPI", "pypi-AgEIcHlwaS5vcmc" + "FAKE" * 18),
    ("SendGrid", "SG." + "FAKEfake_-" * 2 + "FA" + "." + "FAKEfake_-" * 4 + "FAK"),
    ("Slack webhook", "https://hooks.slack.com/services/T0FAKE/B0FAKE/FAKEfakeFAKE"),
    ("SoftLayer", "softlayer_pass: " + "0f" * 32),
    ("Square", "sq0csp-" + "FAKEfake_-" * 4 + "FAK"),
    ("Stripe live (detect-secrets)", "sk_live_" + "FAKEfake" * 3),
    ("Telegram (detect-secrets)", "1234567890:" + "FAKEfake_-" * 3 + "FAKEf"),
    ("Twilio", "SK" + "0123456789abcdef" * 2),
    ("Artifactory", 'artifactory "AKC' + "FAKEfake12" + '"'),
]


@pytest.mark.parametrize(("name", "secret"), ADDED_CASES, ids=[c[0] for c in ADDED_CASES])
def test_added_formats(name: str, secret: str) -> None:
    text = f"output before\n{secret}\nand after"  # some detectors work line by line
    out = scrub(text)
    # The credential part must be gone; keys/labels around it may stay.
    core = secret.split("=")[-1].split(": ")[-1].split(":", 1)[-1].strip("\"' ")
    if name == "URL credentials":
        core = "FakePass123"
    assert core not in out, (name, out)
    assert REDACTED in out
    assert out.startswith("output before\n")
    assert out.endswith("\nand after")


def test_private_key_blocks() -> None:
    body = "MIIEFAKEfakeFAKEfake\nFAKEfakeFAKEfake0123==\n"
    for kind in ("RSA ", "EC ", "OPENSSH ", "DSA ", ""):
        block = f"-----BEGIN {kind}PRIVATE KEY-----\n{body}-----END {kind}PRIVATE KEY-----"
        assert scrub(f"a\n{block}\nb") == f"a\n{REDACTED}\nb"
    pgp = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{body}-----END PGP PRIVATE KEY BLOCK-----"
    assert scrub(pgp) == REDACTED
    cut = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}"
    assert "MIIEFAKE" not in scrub(cut)
    putty = "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 2\nFAKEfakeFAKE\nfakeFAKE==\n"
    assert "FAKEfakeFAKE" not in scrub(putty)


def test_formats_are_derived_from_detect_secrets_plugins() -> None:
    """Every regex detector of the installed detect-secrets is used, minus the two excluded."""
    plugins = importlib.import_module("detect_secrets.plugins")
    base = importlib.import_module("detect_secrets.plugins.base")
    names: set[str] = set()
    for info in pkgutil.iter_modules(plugins.__path__):
        module = importlib.import_module(f"detect_secrets.plugins.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, base.RegexBasedDetector)
                and cls.__module__ == module.__name__
                and not inspect.isabstract(cls)
                and cls.__name__ not in {"IPPublicDetector", "PrivateKeyDetector"}
            ):
                detector: Any = cls
                names.add(str(detector.secret_type))
    assert len(names) >= 20
    assert detect_secrets_error() is None
    assert names <= set(secret_formats())
    assert "Public IP (ipv4)" not in secret_formats()


def test_the_shipped_detect_secrets_table_is_what_the_installed_version_derives() -> None:
    """A detect-secrets upgrade that changes its detectors fails here until the table is
    regenerated (``python scripts/gen_scrub_formats.py``)."""
    assert installed_detect_secrets() == scrub_formats.DETECT_SECRETS_VERSION
    assert derive_detect_secrets_patterns() == scrub_formats.PATTERNS


def test_another_detect_secrets_version_is_derived_not_read_from_the_table() -> None:
    shipped = scrub_formats.DETECT_SECRETS_VERSION
    assert detect_secrets_patterns(shipped) is scrub_formats.PATTERNS
    derived = detect_secrets_patterns(shipped + ".post1")
    assert derived is not scrub_formats.PATTERNS
    assert derived == derive_detect_secrets_patterns()


_FIRST_SCRUB = """
import json, sys
from beamclaw_obs import scrub
from beamclaw_obs.scrub import detect_secrets_error
out = [scrub("x password=hunter2"), scrub("aws_pw = '" + "FAKE/fake+" * 4 + "'")]
print(json.dumps([out, "detect_secrets" in sys.modules, detect_secrets_error()]))
"""


def test_the_first_scrub_reads_the_table_without_importing_detect_secrets() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _FIRST_SCRUB], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    out, imported, error = json.loads(r.stdout)
    assert out == [f"x password={REDACTED}", f"aws_pw = '{REDACTED}'"]
    assert not imported
    assert error is None


# ------------------------------------------------------------------ configured secrets


def test_resolved_secret_is_scrubbed_everywhere() -> None:
    value = "correct-horse-battery-staple"
    secret = Secret(env="MY_SERVICE_KEY")
    assert secret.resolve(environ={"MY_SERVICE_KEY": value}) == value
    out = scrub(f"log: calling with {value}; again:{value}!")
    assert out == f"log: calling with {REDACTED}; again:{REDACTED}!"


def test_literal_secret_in_config_is_scrubbed() -> None:
    secret = Secret.model_validate("plain-literal-value")
    secret.resolve()
    assert scrub("x plain-literal-value y") == f"x {REDACTED} y"


def test_short_literals_are_not_registered() -> None:
    register_secret("abc")
    assert scrub("abc abc") == "abc abc"


def test_forget_secrets() -> None:
    register_secret("temporary-secret")
    forget_secrets()
    assert scrub("temporary-secret") == "temporary-secret"


def test_secret_inside_marker_text_does_not_grow() -> None:
    register_secret("REDACTED")
    once = scrub("REDACTED and [REDACTED]")
    assert once == f"{REDACTED} and {REDACTED}"
    assert scrub(once) == once


# ------------------------------------------------------------------ no false positives

ORDINARY = [
    "max_tokens: 512",
    '{"max_tokens": 512, "temperature": 0.2}',
    "The token count is 1,024 tokens.",
    "tokens=42",
    "token_count = 7",
    "if password == other: pass",
    "mytoken=abc",
    "password:\n  nested: mapping",
    "I trained it with sk-learn, I mean scikit-learn.",
    "pip install scikit-learn sk-learn-intelex",
    "the task-definitions-for-the-whole-project are in tasks/",
    "Use a Bearer token in the Authorization header.",
    "It takes a basic understanding of Python.",
    "def login(user: str, password: str) -> bool:",
    "password = getpass.getpass()",
    'api_key = os.environ["OPENAI_API_KEY"]',
    'api_key = { env = "OPENROUTER_API_KEY" }',
    "token = None",
    "secret: SecretStr = Field(...)",
    "export GITHUB_TOKEN=$GH_TOKEN",
    "curl -H 'Authorization: Bearer ${TOKEN}' https://api.example.com",
    "password: <your-password>",
    "commit 3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Server at 8.8.8.8:53 answered.",
    "APACHE LICENSE 2.0",
    "Visit https://example.com/path?q=1 for more.",
    "ghp is a prefix; gh_pages is a branch; xox is a game.",
    "The AKIA prefix marks AWS access key ids.",
    "Ceci n'est pas un secret \u2014 \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8.",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_no_false_positives(text: str) -> None:
    assert scrub(text) == text


# ------------------------------------------------------------------ robustness


def test_never_raises_and_never_leaks_on_bad_input() -> None:
    weird: object = b"token=abc"
    assert scrub(weird) == REDACTED  # type: ignore[arg-type]
    assert scrub("") == ""
    assert scrub("\x00\ud800 token=abc") == "\x00\ud800 token=[REDACTED]"


def test_large_text() -> None:
    text = ("lorem ipsum dolor sit amet " * 4000) + "api_key=fakevalue42"
    out = scrub(text)
    assert out.endswith("api_key=[REDACTED]")
    assert len(out) < len(text)


def test_scrub_value_walks_json() -> None:
    value = {"headers": {"Authorization": "Bearer fake.token-123456"}, "list": ["password=x1"]}
    assert scrub_value(value) == {
        "headers": {"Authorization": "Bearer [REDACTED]"},
        "list": ["password=[REDACTED]"],
    }
    assert scrub_value(42) == 42


# ------------------------------------------------------------------ properties

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_SECRETS = st.text(alphabet=_ALNUM, min_size=6, max_size=24)
_PIECES = st.one_of(
    st.text(max_size=40),
    st.sampled_from([s for _, s in ADDED_CASES] + [t for _, t, _ in SEED_CASES]),
    st.sampled_from(
        [REDACTED, "[", "]", "=", ": ", '"', "'", "Bearer ", "Basic ", "token", "sk-", " ", "\n"]
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SECRETS, min_size=1, max_size=3), st.lists(_PIECES, max_size=12), st.data())
def test_idempotent_and_no_registered_secret_survives(
    secrets: list[str], pieces: list[str], data: st.DataObject
) -> None:
    forget_secrets()
    for secret in secrets:
        assume(secret not in REDACTED)
        register_secret(secret)
    for secret in secrets:
        pieces.insert(data.draw(st.integers(0, len(pieces))), secret)
    text = "".join(pieces)
    once = scrub(text)
    assert scrub(once) == once
    for secret in secrets:
        assert secret not in once


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_idempotent_on_any_text(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once


def test_short_texts_remembered_are_forgotten_when_secrets_change() -> None:
    literal = "zq7-house-lamp-orbit-91"  # matches no built-in format: literal only
    text = f"value={literal}"
    assert scrub(text) == text  # scrubbed (and remembered) before the secret is known
    register_secret(literal)
    assert literal not in scrub(text)
    assert literal not in scrub(text + " " * 300)  # the long-text path agrees
    forget_secrets()
    assert scrub(text) == text


def test_ids_new_per_session_pass_through_the_short_text_cache() -> None:
    """10,000 distinct ids (one per session, run or request) keep at most the cache's
    bound alive, not one entry each (issue 18)."""
    forget_secrets()  # an empty cache
    scrub("warm up")  # the first scrub compiles the patterns
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(10_000):
            assert scrub(f"{i:032x}") == f"{i:032x}"
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 400_000, f"{kept} bytes kept"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Error: password=hunter2", "Error: password=[REDACTED]"),
        ("Note: api_key=fakevalue42 end", "Note: api_key=[REDACTED] end"),
        ("url: https://x.example?token=abcdef", "url: https://x.example?token=[REDACTED]"),
        ("Here it is: token: abcdef and", "Here it is: token: [REDACTED] and"),
    ],
)
def test_a_key_value_after_a_separator_that_is_not_a_key_is_still_found(
    text: str, expected: str
) -> None:
    # "Error:" is no key, and what follows it holds a real key's value
    assert scrub(text) == expected


def test_every_rule_waits_for_a_literal_its_matches_contain() -> None:
    """A rule's regex runs only on a text holding, for each of its trigger sets, one
    literal every match contains (one character when the pattern has no longer one: the
    detect-secrets Telegram token's ``:``); a rule without one would scan every text, a
    streamed answer's line again at every token."""
    rules = importlib.import_module("beamclaw_obs.scrub")._rules()
    assert [r.pattern.pattern for r in rules if not r.triggers] == []
    prose = "a line of plain prose, with no colon in it and nothing secret at all"
    assert scrub(prose) == prose
