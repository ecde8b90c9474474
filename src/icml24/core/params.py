"""Parameters from the command line: seed lists and ``--set key=value`` typed by the experiment's hints.

Scalars (``int``, ``float``, ``str``, ``bool``) and sequences (``list[int]``, ``list[float]``, ``list[str]``,
``tuple[...]``) parse here, once, so no paper writes its own comma-list parser. On ``run`` a sequence is
written ``--set rates=0.25,0.5``; on ``sweep``, where commas separate grid points of a scalar, the grid points of
a sequence parameter are separated by ``;`` (``--set 'rates=0.25,0.5;1.0'``).
"""

from __future__ import annotations

import itertools
import math
import typing
from typing import Any

from icml24.core.registry import Experiment

_SCALARS = (int, float, str, bool)


MAX_SEEDS = 10_000_000  # a range beyond this is a typo, not a plan
MAX_SEED = 2**63 - 1  # seeds are stored as SQLite integers (signed 64-bit)


def check_seed(seed: int, what: str = "--seed") -> int:
    """A seed the store can hold: 0 <= seed < 2**63."""
    if seed < 0:
        raise ValueError(f"{what} {seed} is negative; seeds are 0, 1, 2, ...")
    if seed > MAX_SEED:
        raise ValueError(f"{what} {seed} is too large; seeds must be below 2**63")
    return seed


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> [0, 1, 2, 3, 4]; ``"1,3,7"`` -> [1, 3, 7]; ``"5"`` -> [5]."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                low, high = part.split("-", 1)
                if int(low) > int(high):
                    raise ValueError
                if int(high) - int(low) >= MAX_SEEDS:
                    raise OverflowError
                seeds.extend(range(int(low), int(high) + 1))
            elif part:
                seeds.append(int(part))
    except OverflowError:
        raise ValueError(f"--seeds {text!r} names more than {MAX_SEEDS:,} seeds") from None
    except ValueError:
        raise ValueError(f"--seeds {text!r} is not a seed list; write e.g. 0-4 or 0,2,5") from None
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds {text!r} names no seed; write e.g. 0-4 or 0,2,5")
    if max(seeds) > MAX_SEED:
        raise ValueError(f"--seeds {text!r} names a seed of 2**63 or more; seeds must be below 2**63")
    return sorted(set(seeds))


def is_sequence(kind: Any) -> bool:
    """Whether a parameter's type hint is a list or tuple (``list[int]``, ``tuple[float, ...]``)."""
    return typing.get_origin(kind) in (list, tuple) or kind in (list, tuple)


def type_name(kind: Any) -> str:
    """``list[int]`` for a generic alias, ``float`` for a class."""
    return getattr(kind, "__name__", None) if typing.get_origin(kind) is None else str(kind).replace("typing.", "")


def _scalar(kind: type, text: str) -> Any:
    text = text.strip()
    if kind is bool:
        lowered = text.lower()
        if lowered not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError
        return lowered in ("true", "1", "yes")
    if kind is str:
        if not text:
            raise ValueError
        return text
    value = kind(text)
    if kind is float and not math.isfinite(value):
        raise ValueError  # nan and inf are never a setting: they would only come back as an error verdict
    return value


def convert(kind: Any, text: str) -> Any:
    """Parse ``text`` as ``kind`` (a scalar type or a list/tuple hint); raises ValueError when it does not fit."""
    origin = typing.get_origin(kind)
    if origin is None and kind in _SCALARS:
        return _scalar(kind, text)
    if is_sequence(kind):
        args = typing.get_args(kind)
        items = [item for item in text.split(",") if item.strip()]
        if not items:
            raise ValueError
        if (origin or kind) is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(items):
                raise ValueError
            return tuple(_scalar(a, item) for a, item in zip(args, items))
        item_kind = args[0] if args else str
        values = [_scalar(item_kind, item) for item in items]
        return tuple(values) if (origin or kind) is tuple else values
    return text


def parse_value(exp: Experiment, key: str, text: str) -> Any:
    """Convert a ``--set`` value by the experiment's type hint, with a clear error."""
    types = exp.parameters()
    if key not in types:
        raise ValueError(f"{exp.key} takes no parameter {key!r}; it takes: {', '.join(types) or 'none'}")
    kind = types[key]
    try:
        return convert(kind, text)
    except (ValueError, TypeError):
        example = " (a comma list, e.g. 1,2,3)" if is_sequence(kind) else ""
        finite = " (a finite number)" if "float" in type_name(kind) else ""
        raise ValueError(f"--set {key}={text}: {exp.key} expects {type_name(kind)}{finite} for {key}{example}"
                         ) from None


def parse_grid(exp: Experiment, assignments: list[str], allow_lists: bool) -> list[dict[str, Any]]:
    """``["k=a,b", "m=1"]`` -> the grid of override dicts (several grid points only when ``allow_lists``)."""
    axes: dict[str, list[Any]] = {}
    types = exp.parameters()
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {item!r} must look like key=value")
        key = key.strip()
        separator = ";" if is_sequence(types.get(key)) else ","
        values = value.split(separator) if allow_lists else [value]
        axes[key] = [parse_value(exp, key, v) for v in values]
    keys = list(axes)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(axes[k] for k in keys))] or [{}]
