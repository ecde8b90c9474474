"""One progress protocol for every method (issue #46): a callback ``progress(done, total)``.

A method with a long loop takes ``progress: Callable[[int, int], None] | None = None`` (in ``fit``/``run``, the
call that loops, not ``__init__``) and calls ``progress(done, total)`` after each unit of its outermost loop
(a training step, a layer, a chunk of candidates): ``done`` counts units finished so far (1 .. ``total``),
``total`` is the number of units that call will run. The return value is ignored; ``None`` means no reporting.
A method states its unit in the docstring. ``tracked`` wraps a loop this way.

On the caller's side any ``(done, total)`` function works (a logger, a test's list.append); ``progress_bar``
is one drawing a tqdm bar, and an experiment gets one from ``ctx.progress_callback(description)`` (a bar when the
run is interactive, else ``None``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
Progress = Callable[[int, int], None]


def check_progress(progress: object, name: str = "progress") -> Progress | None:
    """``progress`` itself when it is None or callable, else a ValueError naming ``name``."""
    if progress is not None and not callable(progress):
        raise ValueError(f"{name} must be None or a callable progress(done, total), got {type(progress).__name__}")
    return progress


def tracked(iterable: Iterable[T], progress: Progress | None, total: int | None = None) -> Iterator[T]:
    """Yield the items of ``iterable``, calling ``progress(done, total)`` after each (``total`` defaults to
    ``len(iterable)``). With ``progress=None`` this is the iterable itself."""
    check_progress(progress)
    if progress is None:
        yield from iterable
        return
    if total is None:
        if not hasattr(iterable, "__len__"):
            raise ValueError("total is needed for an iterable without a length (a generator)")
        total = len(iterable)  # type: ignore[arg-type]
    for done, item in enumerate(iterable, 1):
        yield item
        progress(done, total)


def progress_bar(description: str = "", enabled: bool = True) -> Progress | None:
    """A ``(done, total)`` callback drawing a tqdm bar (opened on the first call, closed when ``done`` reaches
    ``total``; a new ``total`` or ``done`` going back starts a new bar); ``None`` when not ``enabled``."""
    if not enabled:
        return None
    from tqdm.auto import tqdm

    state: dict = {"bar": None}

    def report(done: int, total: int) -> None:
        bar = state["bar"]
        if bar is None or bar.total != total or done < bar.n:
            if bar is not None:
                bar.close()
            bar = state["bar"] = tqdm(total=total, desc=description or None, leave=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()
            state["bar"] = None

    return report
