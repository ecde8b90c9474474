"""Text classification tasks built from corpora that install offline, for merging experiments on a text encoder.

Each task is short texts with a label from a stated source and the label names in words (the zero-shot head embeds
them, as CLIP's heads embed class names). The texts come from wheels in the project's set-up:

================== ====================================================== ==========================================
task               input                                                  label (source)
================== ====================================================== ==========================================
sentiment          a VADER lexicon word (|mean| >= 1.5, std <= 1)         sign of its human rating (vaderSentiment)
province_region    a province / state name                                its country's region (countryinfo)
play_genre         a speech from a Shakespeare play                       the play's First Folio genre
pydoc_topic        a sentence of Python's help topics                     the help topic group (pydoc_data.topics)
stdlib_module      the first docstring line of a standard-library call    the module group it is defined in
speaker            a speech from Hamlet                                   who speaks it (the play's speech prefix)
sentence_type      a verse line of a play, final mark removed             ``?`` / ``!`` / ``.`` (its final mark)
currency           a country name                                         euro / dollar / CFA franc / other (ISO)
play_title         a speech from one of five plays                        the play (the file it comes from)
province_language  a province / state name                                its country's first language
poem_or_play       a verse line                                           from the poems (sonnets...) or a play
europe_subregion   a European province name                               its country's subregion (countryinfo)
capital_region     a capital city                                         its country's region (countryinfo)
dataset_doc        a sentence of a scikit-learn dataset description       the dataset (sklearn/datasets/descr)
================== ====================================================== ==========================================

Splits are drawn once per task from a seeded, class-balanced order (validation, then test, then train).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from icml24._random import RandomState, seed_int

TEXT_TASKS = ("sentiment", "province_region", "play_genre", "pydoc_topic", "stdlib_module", "speaker",
              "sentence_type", "currency", "play_title", "province_language", "poem_or_play", "europe_subregion",
              "capital_region", "dataset_doc")

_GENRES = {  # the First Folio's three sections (1623)
    "comedy": ("tempest", "two_gentlemen_of_verona", "merry_wives_of_windsor", "measure_for_measure",
               "comedy_of_errors", "much_ado_about_nothing", "loves_labours_lost", "midsummer_nights_dream",
               "merchant_of_venice", "as_you_like_it", "taming_of_the_shrew", "alls_well_that_ends_well",
               "twelfth_night", "winters_tale"),
    "history": ("john", "richard_ii", "henry_iv_part_1", "henry_iv_part_2", "henry_v", "henry_vi_part_1",
                "henry_vi_part_2", "henry_vi_part_3", "richard_iii", "henry_viii"),
    "tragedy": ("coriolanus", "tragedy_of_titus_andronicus", "romeo_and_juliet", "timon_of_athens", "julius_caesar",
                "macbeth", "hamlet", "lear", "othello", "antony_and_cleopatra"),
}
_TITLES = {"hamlet": "Hamlet", "macbeth": "Macbeth", "romeo_and_juliet": "Romeo and Juliet",
           "twelfth_night": "Twelfth Night", "julius_caesar": "Julius Caesar"}
_SPEAKERS = {"Ham.": "Hamlet", "Hor.": "Horatio", "King.": "the King", "Pol.": "Polonius", "Queen.": "the Queen",
             "Laer.": "Laertes", "Oph.": "Ophelia"}
_POEMS = ("sonnets", "rape_of_lucrece", "lovers_complaint", "passionate_pilgrim", "phoenix_and_the_turtle")
_TOPICS = {"string methods": ("string-methods",), "format strings": ("formatstrings",),
           "special method names": ("specialnames", "customization"), "sequence types": ("typesseq",
           "typesseq-mutable"), "dictionaries": ("typesmapping",), "exceptions": ("exceptions", "try", "raise"),
           "the import system": ("import",)}
_MODULES = {"mathematics": ("math", "cmath", "statistics"), "files and the operating system": ("os", "os.path",
            "shutil"), "text and regular expressions": ("string", "textwrap", "re"), "random numbers": ("random",),
            "dates and times": ("datetime", "time", "calendar"), "iterators": ("itertools", "functools")}
_REGIONS = {"Africa": "Africa", "Americas": "the Americas", "Asia": "Asia", "Europe": "Europe", "Oceania": "Oceania"}
_LANGUAGES = {"en": "English", "es": "Spanish", "fr": "French", "ar": "Arabic", "pt": "Portuguese"}
_EUROPE = {"Northern Europe": "northern Europe", "Southern Europe": "southern Europe",
           "Eastern Europe": "eastern Europe", "Western Europe": "western Europe"}
_DATASETS = {"iris": "iris flowers", "digits": "handwritten digits", "wine_data": "wine", "breast_cancer":
             "breast cancer", "california_housing": "housing", "covtype": "forest cover type",
             "twenty_newsgroups": "newsgroups", "olivetti_faces": "faces", "kddcup99": "network intrusion"}


@dataclass
class TextTask:
    """One classification task: texts and integer labels per split, the label names and where labels come from."""

    name: str
    class_names: list[str]
    label_source: str
    texts: dict[str, list[str]]  # split ("train", "val", "test") -> texts
    labels: dict[str, np.ndarray]  # split -> int64 labels in [0, num_classes)

    @property
    def num_classes(self) -> int:
        return len(self.class_names)


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"this text task needs the {name!r} package (pip install it; see pyproject.toml)")
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def _speeches(play: str) -> tuple[tuple[str, str], ...]:
    """(speech prefix, first lines of the speech) of a modern-spelling play, stage directions removed."""
    text = (_package_dir("shksprdata") / "texts" / f"{play}_gut.txt").read_text(encoding="utf-8", errors="replace")
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in block.strip().splitlines()]
        if len(lines) >= 2 and re.fullmatch(r"[A-Z][A-Za-z]*\.", lines[0]):
            speech = re.sub(r"\[[^\]]*\]", "", " ".join(lines[1:3])).strip()
            if len(speech) >= 12:
                out.append((lines[0], speech))
    return tuple(out)


@cache
def _verse_lines(work: str) -> tuple[str, ...]:
    """Lines of a poem, or of the speeches of a play, with at least four words (no headings or stage directions)."""
    text = (_package_dir("shksprdata") / "texts" / f"{work}_gut.txt").read_text(encoding="utf-8", errors="replace")
    if work in _POEMS:
        lines = text.splitlines()
    else:
        blocks = [b.strip().splitlines() for b in re.split(r"\n\s*\n", text)]
        lines = [line for b in blocks if len(b) >= 2 and re.fullmatch(r"[A-Z][A-Za-z]*\.", b[0].strip())
                 for line in b[1:]]
    lines = [line.strip() for line in lines]
    return tuple(line for line in lines if len(line.split()) >= 4 and "[" not in line and not line.isupper())


@lru_cache(maxsize=1)
def _countries() -> tuple[dict, ...]:
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((_package_dir("countryinfo") / "data")
                                                                          .glob("*.json"))]
    return tuple(r for r in records if r.get("name"))


def _listed(value) -> list:
    if isinstance(value, list):
        return value
    try:
        parsed = ast.literal_eval(value) if isinstance(value, str) and value.startswith("[") else []
    except (ValueError, SyntaxError):
        return []
    return parsed if isinstance(parsed, list) else []


def _provinces(label_of) -> list[tuple[str, str]]:
    """(province, label_of(country)) for every province of a country whose label is not None."""
    return [(str(p), label) for c in _countries() if (label := label_of(c)) is not None
            for p in _listed(c.get("provinces")) if isinstance(p, str) and 3 <= len(p) <= 40 and p != c["name"]]


def _currency(c: dict) -> str | None:
    codes = _listed(c.get("currencies"))
    if not codes:
        return None
    code = codes[0]
    return ("euro" if code == "EUR" else "dollar" if code.endswith("D") and code not in ("SGD", "BHD")
            and code[:2] in ("US", "XC", "AU", "NZ", "CA", "BS", "BB", "BZ", "BM", "BN", "KY", "FJ", "GY", "JM", "LR",
                             "NA", "SB", "SR", "TT", "TW", "ZW", "HK")
            else "CFA franc" if code in ("XOF", "XAF") else "another currency")


def _sentences(text: str, min_words: int = 5, max_chars: int = 200) -> list[str]:
    flat = re.sub(r"\s+", " ", re.sub(r"[`*|=~^-]{2,}|\.\. [a-z:-]+::.*?\n", " ", text))
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", flat) if len(s.split()) >= min_words and len(s) <= max_chars]


def _docstring_lines(module_names: tuple[str, ...]) -> list[str]:
    import importlib
    out = []
    for name in module_names:
        module = importlib.import_module(name)
        objects = [getattr(module, a) for a in sorted(dir(module)) if not a.startswith("_")]
        for obj in objects + [getattr(o, a) for o in objects if inspect.isclass(o) for a in sorted(vars(o))
                              if not a.startswith("_")]:
            doc = inspect.getdoc(obj) if callable(obj) else None
            first = doc.strip().splitlines()[0] if doc else ""
            if len(first.split()) >= 3 and not first.startswith(("Initialize self", "Return self")):
                out.append(first)
    return out


def _examples(name: str) -> tuple[list[tuple[str, str]], list[str], str]:
    """(text, label name) pairs, the label names in order, and the label source, for task ``name``."""
    if name == "sentiment":
        path = _package_dir("vaderSentiment") / "vader_lexicon.txt"
        rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
        pairs = [(r[0], "positive" if float(r[1]) > 0 else "negative") for r in rows
                 if len(r) >= 3 and r[0].isalpha() and abs(float(r[1])) >= 1.5 and float(r[2]) <= 1.0]
        return pairs, ["negative", "positive"], "vaderSentiment lexicon: sign of the mean human rating"
    if name in ("province_region", "capital_region"):
        region = lambda c: _REGIONS.get(c.get("region"))  # noqa: E731
        pairs = (_provinces(region) if name == "province_region" else
                 [(c["capital"], region(c)) for c in _countries() if region(c) and isinstance(c.get("capital"), str)
                  and c["capital"]])
        return pairs, list(_REGIONS.values()), "countryinfo: the region of the country"
    if name == "province_language":
        language = lambda c: _LANGUAGES.get((_listed(c.get("languages")) or [None])[0])  # noqa: E731
        return _provinces(language), list(_LANGUAGES.values()), "countryinfo: the country's first language"
    if name == "europe_subregion":
        return (_provinces(lambda c: _EUROPE.get(c.get("subregion"))), list(_EUROPE.values()),
                "countryinfo: the subregion of the (European) country")
    if name == "currency":
        pairs = [(c["name"], cur) for c in _countries() if (cur := _currency(c))]
        return pairs, ["euro", "dollar", "CFA franc", "another currency"], "countryinfo: ISO code of the currency"
    if name == "play_genre":
        pairs = [(s, genre) for genre, plays in _GENRES.items() for play in plays for _, s in _speeches(play)]
        return pairs, list(_GENRES), "the First Folio's section (comedies, histories, tragedies) of the play"
    if name == "play_title":
        pairs = [(s, title) for play, title in _TITLES.items() for _, s in _speeches(play)]
        return pairs, list(_TITLES.values()), "the play the speech is from"
    if name == "speaker":
        pairs = [(s, _SPEAKERS[who]) for who, s in _speeches("hamlet") if who in _SPEAKERS]
        return pairs, list(_SPEAKERS.values()), "the speech prefix in Hamlet"
    if name == "sentence_type":
        marks = {"?": "a question", "!": "an exclamation", ".": "a statement"}
        plays = [p for plays in _GENRES.values() for p in plays]
        pairs = [(line[:-1].rstrip(), marks[line[-1]]) for p in plays for line in _verse_lines(p) if line[-1] in marks]
        return pairs, list(marks.values()), "the line's final punctuation mark (removed from the text)"
    if name == "poem_or_play":
        pairs = ([(line, "a poem") for p in _POEMS for line in _verse_lines(p)]
                 + [(line, "a play") for p in _GENRES["tragedy"] + _GENRES["comedy"] for line in _verse_lines(p)])
        return pairs, ["a poem", "a play"], "whether the line comes from the poems (sonnets, ...) or a play"
    if name == "pydoc_topic":
        from pydoc_data.topics import topics
        pairs = [(s, label) for label, keys in _TOPICS.items() for key in keys for s in _sentences(topics[key])]
        return pairs, list(_TOPICS), "the pydoc_data.topics entry the sentence comes from"
    if name == "stdlib_module":
        pairs = [(line, label) for label, mods in _MODULES.items() for line in _docstring_lines(mods)]
        return pairs, list(_MODULES), "the standard-library module (group) defining the documented callable"
    if name == "dataset_doc":
        folder = _package_dir("sklearn") / "datasets" / "descr"
        pairs = [(s, label) for stem, label in _DATASETS.items()
                 for s in _sentences((folder / f"{stem}.rst").read_text(encoding="utf-8"))]
        return pairs, list(_DATASETS.values()), "the scikit-learn dataset whose description holds the sentence"
    raise ValueError(f"unknown text task {name!r}; choose from {TEXT_TASKS}")


def _balanced_order(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order in which classes take turns (round robin over shuffled per-class lists)."""
    rank = np.empty(len(labels))
    for cls in np.unique(labels):
        members = np.flatnonzero(labels == cls)
        rank[rng.permutation(members)] = np.arange(len(members)) + rng.random()
    return np.lexsort((rng.random(len(labels)), rank))


def _within_class_rank(labels: np.ndarray) -> np.ndarray:
    """For each position of ``labels``, how many earlier positions hold the same label."""
    one_hot = labels[:, None] == np.unique(labels)[None, :]
    return (np.cumsum(one_hot, axis=0) - 1)[one_hot]


def _first_capped(labels: np.ndarray, caps: np.ndarray, count: int) -> np.ndarray:
    """Positions of the first ``count`` entries of ``labels`` (in order) whose class has not yet given ``caps[c]``."""
    eligible = np.flatnonzero(_within_class_rank(labels) < caps[labels])
    return eligible[:count]


def text_task(name: str, num_train: int = 256, num_val: int = 64, num_test: int = 128,
              random_state: RandomState = None) -> TextTask:
    """Task ``name`` with class-balanced validation and test splits (as far as each class's share allows) and up to
    ``num_train`` training texts.

    Duplicate texts are kept once (first label). When the corpus is small, the three splits shrink in proportion.
    A class gives validation and test at most its own share (``num_val / total`` and ``num_test / total`` of its
    texts, at least one each), so a small class keeps texts for training: a split that drew every example of a class
    into validation and test left fine-tuning without it (it then unlearned the class).
    ``random_state`` (None, an int or a numpy Generator; ``icml24._random.seed_int``) draws the split: the same int,
    the same split.
    """
    if name not in TEXT_TASKS:
        raise ValueError(f"unknown text task {name!r}; choose from {TEXT_TASKS}")
    for arg, value in (("num_train", num_train), ("num_val", num_val), ("num_test", num_test)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{arg} must be a positive int, got {value!r}")
    pairs, classes, source = _examples(name)
    unique = dict(reversed([(t, y) for t, y in pairs if y in classes]))  # first label of a text wins
    texts = sorted(unique)
    labels = np.array([classes.index(unique[t]) for t in texts], dtype=np.int64)
    if len(np.unique(labels)) < len(classes):
        raise ValueError(f"task {name!r}: some classes have no text in the installed corpus")
    order = _balanced_order(labels, np.random.default_rng([seed_int(random_state), TEXT_TASKS.index(name)]))
    total = num_val + num_test + num_train
    scale = min(1.0, len(order) / total)
    n_val, n_test = int(num_val * scale), int(num_test * scale)
    sizes = np.bincount(labels, minlength=len(classes))
    share = lambda n: np.maximum(1, sizes * n // min(total, len(order)))  # noqa: E731  a class's most in a split
    picked = _first_capped(labels[order], share(n_val), n_val)
    val, rest = order[picked], np.delete(order, picked)
    picked = _first_capped(labels[rest], share(n_test), n_test)
    test, train = rest[picked], np.delete(rest, picked)[:num_train]
    cuts = {"val": val, "test": test, "train": train}
    return TextTask(name, classes, source, {s: [texts[i] for i in idx] for s, idx in cuts.items()},
                    {s: labels[idx] for s, idx in cuts.items()})


def text_tasks(names=TEXT_TASKS, num_train: int = 256, num_val: int = 64, num_test: int = 128,
               random_state: RandomState = None) -> list[TextTask]:
    """``text_task`` for each name."""
    return [text_task(n, num_train, num_val, num_test, random_state) for n in names]
