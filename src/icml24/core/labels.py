"""Labelled metrics: a family of numbers under one name, told apart by labels, without any paper parsing a key.

The store keeps flat ``{str: float}`` dicts, so a labelled metric is a flat key in one canonical encoding::

    labelled("regret", d=2, eps=0.1, policy="eoo")  ->  "regret[d=2,eps=0.1,policy=eoo]"

- labels are written sorted by label name, so the same labels always give the same key;
- an ``int`` is written as ``str(int)`` (``2``), a ``float`` as its shortest round-trip ``repr`` (``0.1``, ``2.0``,
  ``1e-05``: always with a ``.``, an ``e`` or both), a ``bool`` as ``True``/``False``, a ``str`` bare;
- reading a value back: ``True``/``False`` -> bool, else what ``int()`` reads -> int, else what ``float()``
  reads -> float, else the string. A string that would read back as something else (``"2"``, ``"0.1"``,
  ``"nan"``, ``"True"``) is refused when the key is built, so every key reads back to the labels that built it.

``select(metrics, name, **fixed)`` is the reader: every ``(labels, value)`` stored under ``name`` (with the
``fixed`` labels), in a deterministic order. The ``<key>_std`` companions the runner adds beside each mean
(``core/verdicts.aggregate``) end in ``]_std``, not ``]``, so they are not read as members of the family; read one
with ``metrics[labelled(name, **labels) + "_std"]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

LabelValue = int | float | str | bool
Labels = dict[str, LabelValue]

_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")  # a metric name: no brackets, commas, '=' or spaces
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a label name: an identifier
_STRING = re.compile(r"^[A-Za-z0-9_.:+-]+$")  # a string value: no brackets, commas, '=' or spaces


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"metric name must be a non-empty string of letters, digits and '_.:-' (no '[', ']', "
                         f"',', '=' or spaces), got {name!r}")
    return name


def _check_label(label: str) -> str:
    if not _LABEL.match(label):
        raise ValueError(f"label name must be an identifier (letters, digits, '_'), got {label!r}")
    return label


def _encode(label: str, value: object) -> str:
    """One label value as written in a key (see the module docstring), or a ValueError naming the label."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise ValueError(f"label {label} must be finite, got {value!r}")
        return repr(float(value))
    if isinstance(value, str):
        if not _STRING.match(value):
            raise ValueError(f"label {label} must be a non-empty string of letters, digits and '_.:+-' (no '[', "
                             f"']', ',', '=' or spaces), got {value!r}")
        if not isinstance(_decode(value), str):
            raise ValueError(f"label {label}={value!r} is a string that reads back as a number or a bool; "
                             f"pass the number itself, or a string that does not read as one")
        return value
    raise ValueError(f"label {label} must be an int, float, str or bool, got {type(value).__name__} {value!r}")


def _decode(text: str) -> LabelValue:
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def labelled(name: str, /, **labels: LabelValue) -> str:
    """The flat metric key of ``name`` under ``labels``: ``name[k1=v1,k2=v2]``, labels sorted by name.

    ``name`` is positional-only, so a label may itself be called ``name``. Raises ValueError on an empty label
    set, a name or label that would break the encoding, a non-finite float, or a string value that would read
    back as a number or bool.
    """
    _check_name(name)
    if not labels:
        raise ValueError(f"labelled({name!r}) needs at least one label; an unlabelled metric is its plain name")
    parts = [f"{_check_label(k)}={_encode(k, labels[k])}" for k in sorted(labels)]
    return f"{name}[{','.join(parts)}]"


def parse(key: str) -> tuple[str, dict[str, LabelValue]] | None:
    """``(name, labels)`` of a key built by ``labelled``, values typed back; ``None`` for any other key
    (a plain metric, a ``_std`` companion)."""
    if not key.endswith("]") or "[" not in key:
        return None
    name, _, body = key[:-1].partition("[")
    if not _NAME.match(name) or not body:
        return None
    labels: dict[str, LabelValue] = {}
    for part in body.split(","):
        label, sep, text = part.partition("=")
        if not sep or not _LABEL.match(label) or not text or label in labels:
            return None
        labels[label] = _decode(text)
    return name, labels


def _order(labels: dict[str, LabelValue]) -> tuple:
    """Sort key: label by label (sorted names), numbers by value before strings."""
    return tuple((k, (0, float(v), "") if not isinstance(v, str) else (1, 0.0, v))
                 for k, v in sorted(labels.items()))


def select(metrics: Mapping[str, float], name: str, /, **fixed: LabelValue) -> list[tuple[Labels, float]]:
    """Every ``(labels, value)`` stored under ``name`` in ``metrics`` whose labels include ``fixed``, sorted
    by the labels (label names in order, numbers by value before strings).

    ``select(m, "regret", policy="eoo")`` -> ``[({"d": 2, "eps": 0.1, "policy": "eoo"}, 0.3), ...]``. Plain keys,
    other names and ``_std`` companions are skipped; an empty list when nothing matches.
    """
    _check_name(name)
    fixed = {label: _decode(_encode(_check_label(label), value)) for label, value in fixed.items()}
    found = []
    for key, value in metrics.items():
        parsed = parse(key)
        if parsed is None or parsed[0] != name:
            continue
        labels = parsed[1]
        if all(k in labels and _same(labels[k], v) for k, v in fixed.items()):
            found.append((labels, value))
    return sorted(found, key=lambda item: _order(item[0]))


def _same(stored: LabelValue, wanted: LabelValue) -> bool:
    """Equal labels: strings to strings, bools to bools, numbers by value (``2 == 2.0``)."""
    if isinstance(stored, str) or isinstance(wanted, str) or isinstance(stored, bool) or isinstance(wanted, bool):
        return type(stored) is type(wanted) and stored == wanted
    return float(stored) == float(wanted)
