"""The stream scrubber: released pieces join to ``scrub(whole)``, every released prefix is
a prefix of it (no secret, nor the start of one, ever leaves early), and prose is held
back by at most its last word."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_obs import StreamScrubber, forget_secrets, register_secret, scrub

LITERAL = "Zq9!literal-secret"

# One fake secret of every format (as in test_scrub.py), each with the context it needs.
SECRETS = [
    "sk-abc123def456ghi789jkl012mno",
    "ghp_FAKEfake0123456789FAKEfake0123456789",
    "Authorization: Bearer fake.token-123456",
    "Basic dXNlcjpwYXNzd29yZA==",
    "api_key=fakevalue42",
    "api-key: fakevalue42",
    "token: abcdef",
    'password = "two words"',
    "PASSWORD: hunter2",
    "secret=opensesame",
    "sk-ant-api03-" + "FAKEfake09" * 9,
    "sk-or-v1-" + "0f" * 32,
    "sk-proj-" + "FAKEfake12" * 6,
    "github_pat_11" + "FAKE" * 20,
    "xoxb-1234567890-FAKEFAKEFAKE",
    "xapp-1-A0FAKE-1234-" + "f" * 20,
    "AKIAFAKEFAKEFAKE1234",
    "AIza" + "FAKE_fake-" * 3 + "FAKEf",
    "ya29." + "FAKEfake" * 4,
    "sk_test_" + "FAKEfake" * 3,
    "123456789:AA" + "FAKEfake_-" * 3 + "FAKEf",
    "glpat-" + "FAKEfake" * 3,
    "hf_" + "FAKEfake" * 4,
    "gsk_" + "FAKEfake" * 4,
    "BSA" + "FAKEfake" * 3,
    "pplx-" + "FAKEfake" * 5,
    "xai-" + "FAKEfake" * 5,
    "npm_" + "FAKEfake12" * 3 + "FAKEfa",
    "dop_v1_" + "0f" * 32,
    "shpat_" + "0f" * 16,
    "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlIn0.ZmFrZXNpZ25hdHVyZQ",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEFAKE\nFAKEFAKE==\n-----END RSA PRIVATE KEY-----",
    'aws_pw = "' + "FAKE/fake+" * 4 + '"',
    "AccountKey=" + "FAKEfake+/" * 8 + "FAKEfake",
    "https://alice:FakePass123@db.example.com/x",
    "cloudant_pwd=" + "0123456789abcdef" * 4,
    "MTAxFAKEFAKEFAKEFAKEFAKE.GhFAKE.FAKEFAKEFAKEFAKEFAKEFAKEFAK",
    "gldt-" + "FAKEfake" * 3,
    "ibm_cloud_iam_key = " + "FAKEfake_-" * 4 + "FAKE",
    "cos_hmac_secret_key: " + "0123456789abcdef" * 3,
    "0123456789abcdef0123456789abcdef-us12",
    "//registry.npmjs.org/:_authToken=npm_FAKEFAKE",
    "sk-" + "A" * 20 + "T3BlbkFJ" + "B" * 20,
    "pypi-AgEIcHlwaS5vcmc" + "FAKE" * 18,
    "SG." + "FAKEfake_-" * 2 + "FA" + "." + "FAKEfake_-" * 4 + "FAK",
    "https://hooks.slack.com/services/T0FAKE/B0FAKE/FAKEfakeFAKE",
    "softlayer_pass: " + "0f" * 32,
    "sq0csp-" + "FAKEfake_-" * 4 + "FAK",
    "1234567890:" + "FAKEfake_-" * 3 + "FAKEf",
    "SK" + "0123456789abcdef" * 2,
    'artifactory "AKC' + "FAKEfake12" + '"',
    LITERAL,
]
PROSE = ["Hello,", "how", "are", "you", "today?", "The", "key", "is", "Now", "2024", "ok."]


@pytest.fixture(autouse=True)
def _literal_registered() -> Iterator[None]:
    forget_secrets()
    register_secret(LITERAL)
    yield
    forget_secrets()


def _stream(pieces: list[str]) -> list[str]:
    scrubber = StreamScrubber()
    return [scrubber.feed(p) for p in pieces] + [scrubber.finish()]


def _split(text: str, cuts: list[int]) -> list[str]:
    at = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *at], [*at, len(text)], strict=True)]


@pytest.mark.parametrize("secret", SECRETS, ids=range(len(SECRETS)))
def test_every_format_split_at_every_point(secret: str) -> None:
    text = f"Here it is: {secret} and more text.\nNext line."
    whole = scrub(text)
    assert whole != text  # the case really holds a secret
    for cut in range(0, len(text) + 1, 3):
        out = _stream([text[:cut], text[cut:]])
        assert out[0] == whole[: len(out[0])], (cut, out)
        assert "".join(out) == whole


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(
        st.one_of(st.sampled_from(SECRETS), st.sampled_from(PROSE)), min_size=1, max_size=8
    ),
    joints=st.lists(st.sampled_from([" ", "\n", ", ", ""]), min_size=8, max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_released_prefixes_never_reveal_a_secret(
    parts: list[str], joints: list[str], cuts: list[int]
) -> None:
    text = "".join(p + j for p, j in zip(parts, joints, strict=False))
    whole = scrub(text)
    out = _stream(_split(text, cuts))
    released = ""
    for piece in out:
        released += piece
        assert whole.startswith(released), (text, out)
    assert released == whole


def test_prose_is_released_token_by_token() -> None:
    tokens = ["Hello", ",", " how", " are", " you", "?", "\n", "Great", " work", "."]
    out = _stream(tokens)
    # "ello" could begin a Mailchimp key ([0-9a-z]{32}-us..): only the rest of a word
    # that may still grow into a secret waits, and only until the word ends.
    assert out[:3] == ["H", "ello,", " "]
    # each token's text is out by the next token at the latest
    released = ""
    for i, piece in enumerate(out[:-1]):
        released += piece
        assert len("".join(tokens[: i + 1])) - len(released) <= len(tokens[i])
    assert "".join(out) == "".join(tokens)


def test_a_secret_start_is_held_until_it_cannot_grow() -> None:
    scrubber = StreamScrubber()
    assert scrubber.feed("Use sk-an") == "Use "
    assert scrubber.feed("t-api03-FAKEfake09FAKE") == ""
    assert scrubber.feed(" now") == "[REDACTED] "
    assert scrubber.finish() == "now"


def test_prefix_of_a_literal_is_held() -> None:
    scrubber = StreamScrubber()
    assert scrubber.feed("pass Zq9!lit") == "pass "
    assert scrubber.feed("eral-secret.") + scrubber.finish() == "[REDACTED]."


def test_a_key_value_waits_only_after_a_key() -> None:
    scrubber = StreamScrubber()
    assert scrubber.feed("Note: this") == "Note: "
    scrubber = StreamScrubber()
    assert scrubber.feed("Our password: hun") == "Our "  # "password: …" may be a value
    assert scrubber.feed("ter2\n") + scrubber.finish() == "password: [REDACTED]\n"


def test_a_word_that_becomes_a_key_once_a_format_is_redacted_waits_too() -> None:
    """``AIza…FAKEfpassword = "…"``: scrubbing redacts the Google key first, leaving
    ``[REDACTED]password``, a key; the raw word ``…FAKEfpassword`` is none, so judging it
    on the raw text alone released the quoted value's first word (found by hypothesis)."""
    text = "AIza" + "FAKE_fake-" * 3 + 'FAKEfpassword = "two words" ok'
    whole = scrub(text)
    assert "two" not in whole
    released = ""
    for piece in _stream(_split(text, [text.index("two ") + 4])):
        released += piece
        assert whole.startswith(released)
    assert released == whole


def test_a_long_line_keeps_only_recent_context_and_still_scrubs() -> None:
    words = ("the quick brown fox jumps over a lazy dog " * 80).split(" ")
    text = " ".join(words[:400]) + " password: hunter22 and " + " ".join(words[400:])
    text += " token=abcdef " + SECRETS[10] + " end"
    assert "\n" not in text and len(text) > 3000
    whole = scrub(text)
    out = _stream([text[i : i + 4] for i in range(0, len(text), 4)])
    released = ""
    for piece in out:
        released += piece
        assert whole.startswith(released)
    assert released == whole and whole.count("[REDACTED]") == 3


def test_a_second_stream_of_the_same_prose_walks_remembered_moves_only() -> None:
    """The automata's moves are computed once per state sequence and character: the
    per-token cost of a streamed answer is memo lookups, not NFA steps (issue 24's 200
    streams spent most of a core stepping them)."""
    from beamclaw_obs.stream_scrub import _automata  # pyright: ignore[reportPrivateUsage]

    answer = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", "."]
    assert "".join(_stream(answer)) == "".join(answer)
    known = _automata().remembered
    assert known > 0
    assert "".join(_stream(answer)) == "".join(answer)
    assert _automata().remembered == known


def test_a_long_line_is_rescrubbed_within_a_bounded_window() -> None:
    """Each piece re-scrubs the released part of its line: a line longer than
    ``_LONG_LINE`` is cut (keeping ``_CONTEXT``), so a streamed paragraph costs per token
    what a line of at most ``_LONG_LINE`` does, however long it grows."""
    from beamclaw_obs.stream_scrub import _LONG_LINE  # pyright: ignore[reportPrivateUsage]

    scrubber = StreamScrubber()
    words = ("many plain words of an answer that runs on without a newline " * 60).split()
    released = ""
    for word in words:
        released += scrubber.feed(word + " ")
        window = len(scrubber._text) - scrubber._line  # pyright: ignore[reportPrivateUsage]
        assert window <= _LONG_LINE + 64
    released += scrubber.finish()
    assert released == " ".join(words) + " "
