"""Tokeniser and chunker: Unicode words, CJK bigrams, stopwords, word-boundary chunks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_memory import TranscriptMessage, transcript_position
from beamclaw_memory.indexing import message_chunks
from beamclaw_memory.search import Tokenizer, chunk_text, split_sections, stopwords_for, tokenize


def test_accented_cyrillic_greek_and_indic_words_are_not_split() -> None:
    tok = Tokenizer(())
    assert tok("Zürich crème brûlée naïve") == ["zurich", "creme", "brulee", "naive"]
    assert tok("Бабушка живёт в Москве") == ["бабушка", "живёт", "москве"]
    assert tok("Η γιαγιά μαγειρεύει") == ["η", "γιαγιά", "μαγειρεύει"][1:]
    assert tok("दादी हर रविवार") == ["दादी", "हर", "रविवार"]


def test_normalisation_makes_forms_equal() -> None:
    decomposed = "Cafe\u0301"
    fullwidth = "Ｃａｆé"
    assert tokenize(decomposed) == tokenize(fullwidth) == tokenize("CAFÉ") == ["cafe"]


def test_cjk_is_indexed_as_bigrams_and_mixed_scripts_split() -> None:
    assert tokenize("東京都") == ["東京", "京都"]
    assert tokenize("茶") == ["茶"]
    assert tokenize("iPhone手机") == ["iphone", "手机"]
    assert tokenize("서울에서") == ["서울", "울에", "에서"]


def test_stopwords_and_single_letters_are_dropped_digits_kept() -> None:
    english = stopwords_for(("en",))
    assert tokenize("what is the name of a dog 7", english) == ["name", "dog", "7"]
    russian = stopwords_for(("ru",))
    assert tokenize("и в Москве", russian) == ["москве"]


_ASCII = st.text(st.characters(max_codepoint=127), max_size=80) | st.lists(
    st.sampled_from(["The", "the", "a", "7", "x", "Tea", "it's", "ok_go", "42nd", " ", "-"]),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_ASCII)
def test_ascii_text_tokenises_as_through_the_unicode_path(text: str) -> None:
    """ASCII text takes a shortcut; a lone non-ASCII letter after a space (dropped: one
    letter) sends the same words through the CJK split and the Latin folding."""
    stop = stopwords_for(("en",))
    assert tokenize(text, stop) == tokenize(text + " \u00fc", stop)
    assert tokenize(text) == tokenize(text + " \u00fc")


def test_chunks_respect_size_and_word_boundaries() -> None:
    text = " ".join(f"word{i}" for i in range(300))
    chunks = chunk_text(text, 100, 20)
    assert all(len(c) <= 100 for c in chunks)
    words = set(text.split())
    for chunk in chunks:
        assert set(chunk.split()) <= words  # no word was cut in half
    assert chunks[0].split()[-1] in chunks[1]  # consecutive chunks overlap
    assert "word299" in chunks[-1]
    assert chunk_text(text, 100, 20) == chunks  # deterministic


def test_chunks_prefer_paragraph_breaks_and_cut_cjk_hard() -> None:
    para = "alpha beta gamma delta. " * 3
    text = f"{para}\n\n{para}"
    chunks = chunk_text(text, len(para) + 10, 0)
    assert chunks == [para.strip(), para.strip()]
    cjk = "".join(chr(0x4E00 + i) for i in range(100))
    pieces = chunk_text(cjk, 40, 8)
    assert all(len(p) <= 40 for p in pieces)
    assert pieces[0][-8:] == pieces[1][:8]
    assert chunk_text("   ", 100) == []


def test_markdown_sections_keep_heading_paths_and_ignore_fenced_headings() -> None:
    md = "intro\n# Work\nAcme\n## Team\nPriya\n```\n# not a heading\n```\n# Home\nLisbon"
    sections = split_sections(md)
    assert [s.heading for s in sections] == ["", "Work", "Work > Team", "Home"]
    assert "# not a heading" in sections[2].text


@pytest.mark.parametrize("session_id", ["local:ann", "telegram:42/group", "a#b"])
def test_a_transcript_chunk_key_names_its_message(session_id: str) -> None:
    message = TranscriptMessage(session_id=session_id, seq=17, role="user", text="word " * 600)
    keys = [key for key, _ in message_chunks(message, 1200, 200)]
    assert len(keys) > 1
    assert {transcript_position(key) for key in keys} == {(session_id, 17)}
    for other in ("@file/MEMORY.md#0", "@session/17#0", "@session/s/x#0", "cat-1"):
        assert transcript_position(other) is None
