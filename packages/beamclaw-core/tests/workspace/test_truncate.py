"""Per-file truncation: limit respected, head and tail kept, characters never split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core.workspace import TRUNCATION_MARKER, truncate_for_prompt


def test_within_limit_is_unchanged() -> None:
    result = truncate_for_prompt("short", label="X.md", limit_bytes=10)
    assert (result.text, result.truncated, result.kept_bytes) == ("short", False, 5)


def test_multibyte_characters_are_never_split() -> None:
    text = "\u00e9" * 100  # 200 bytes
    result = truncate_for_prompt(text, label="X.md", limit_bytes=51)
    assert result.truncated
    assert "\ufffd" not in result.text
    assert result.kept_bytes <= 51
    assert result.original_bytes == 200


def test_cuts_at_line_breaks_near_the_limit() -> None:
    lines = [f"entry {i:03d}: something worth remembering" for i in range(200)]
    result = truncate_for_prompt("\n".join(lines), label="MEMORY.md", limit_bytes=2000)
    head, tail = result.text.split("\n\n" + TRUNCATION_MARKER)
    tail = tail.split("]\n\n", 1)[1]
    assert head.splitlines()[-1] in lines  # whole lines only
    assert tail.splitlines()[0] in lines
    assert tail.splitlines()[-1] == lines[-1]
    assert "MEMORY.md is" in result.text


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        truncate_for_prompt("x", label="X.md", limit_bytes=0)


@given(st.text(max_size=3000), st.integers(min_value=1, max_value=2000))
def test_kept_text_never_exceeds_the_limit(text: str, limit: int) -> None:
    result = truncate_for_prompt(text, label="F.md", limit_bytes=limit)
    size = len(text.encode("utf-8"))
    if size <= limit:
        assert result.text == text
        assert not result.truncated
    else:
        assert result.truncated
        assert result.kept_bytes <= limit
        assert TRUNCATION_MARKER in result.text
