"""The full-text tokenizer (memoryd/text/tokens.py): its documented rules, and its
ASCII fast path agreeing with the general path on any ASCII text."""

from __future__ import annotations

import string
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.text import tokenize
from memoryd.text.tokens import _tokenize_folded


def test_words_are_folded_stemmed_and_stop_words_dropped() -> None:
    assert tokenize("The Cities were BUILT quickly") == ["citi", "built", "quick"]


def test_words_that_are_also_contractions_without_apostrophe_are_kept() -> None:
    # "she'd", "we'll", "I'll" without apostrophes; "don't" typed "dont" is dropped.
    assert tokenize("The kayak is in the shed, well, I feel ill. Dont go") == [
        "kayak", "shed", "well", "feel", "ill", "go",
    ]  # fmt: skip


def test_joined_words_are_kept_whole_and_as_parts() -> None:
    assert tokenize("ticket XJ-4471, v1.2 to a@b.org") == [
        "ticket", "xj-4471", "xj", "4471", "v1.2", "v1", "2", "a@b.org", "b", "org",
    ]  # fmt: skip


def test_cjk_runs_become_bigrams_and_unigrams() -> None:
    assert tokenize("周末去公园") == ["周末", "末去", "去公", "公园", "周", "末", "去", "公", "园"]
    assert tokenize("meet 周末 at 10") == ["meet", "周末", "周", "末", "10"]


def test_compatibility_forms_are_normalised() -> None:
    # Full-width letters and digits (NFKC) become the ASCII word.
    full_width = "\uff21\uff22\uff23\uff11\uff12\uff13"  # "ABC123" in full-width forms
    assert tokenize(full_width) == tokenize("abc123") == ["abc123"]


ascii_text = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + " -._/:@+_,'!?\t\n"),
    max_size=80,
)


@settings(max_examples=500)
@given(ascii_text)
def test_the_ascii_fast_path_equals_the_general_path(text: str) -> None:
    folded = unicodedata.normalize("NFKC", text).casefold()
    assert tokenize(text) == _tokenize_folded(folded)
