"""Input checks at a method's boundary, one way for every field package (methods never import ``core``).

Every estimator raises ``NotFittedError`` when used before ``fit``; every public ``fit``/``run``/``collect``
rejects NaN or infinite input with a message that names the argument and says what to fix.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError


class NotFittedError(_SklearnNotFittedError):
    """An estimator was used before ``fit``.

    A subclass of scikit-learn's ``NotFittedError`` (itself a ValueError and an AttributeError), so
    ``except sklearn.exceptions.NotFittedError`` and scikit-learn's estimator checks catch it.
    """


def check_fitted(estimator: Any, *attributes: str) -> None:
    """Raise ``NotFittedError`` unless ``estimator`` has every learned attribute (``directions_``, ...)."""
    missing = [a for a in attributes if getattr(estimator, a, None) is None]
    if missing:
        name = type(estimator).__name__
        raise NotFittedError(f"this {name} is not fitted yet ({', '.join(missing)} missing); call fit(...) first")


def check_finite(name: str, value: Any) -> Any:
    """Return ``value`` (an array, tensor or number) unchanged; raise ValueError naming ``name`` on NaN/inf."""
    if value is None:
        return value
    if hasattr(value, "detach"):  # torch tensor, without importing torch here
        finite = bool(value.detach().isfinite().all()) if value.is_floating_point() else True
    elif isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        finite = math.isfinite(float(value))
    else:
        array = np.asarray(value)
        finite = bool(np.isfinite(array).all()) if np.issubdtype(array.dtype, np.number) else True
    if not finite:
        raise ValueError(f"{name} contains NaN or infinite values; clean or impute it before passing it in")
    return value


def check_positive(name: str, value: float, allow_zero: bool = False) -> float:
    """A finite number > 0 (>= 0 with ``allow_zero``), or a ValueError that names it."""
    check_finite(name, value)
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_positive_int(name: str, value: Any) -> int:
    """An integer >= 1 (a bool or a float such as 2.0 is refused), or a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class FittedAttributes:
    """Mixin: reading a learned attribute (``name_``) that ``fit`` has not set yet raises ``NotFittedError``."""

    _fit_call = "fit(...)"  # how the estimator learns, named in the message

    def __getattr__(self, name: str):
        if name.endswith("_") and not name.startswith("_"):
            raise NotFittedError(f"this {type(self).__name__} has no {name} yet; call {self._fit_call} first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
