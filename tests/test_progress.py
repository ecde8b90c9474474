"""icml24._progress: the one progress protocol of methods, progress(done, total)."""

import pytest

from icml24._progress import check_progress, progress_bar, tracked
from icml24.core import Context


def test_tracked_reports_each_unit_after_it_is_done():
    calls = []
    items = []
    for item in tracked("abc", lambda done, total: calls.append((done, total, list(items)))):
        items.append(item)
    assert items == ["a", "b", "c"]
    assert calls == [(1, 3, ["a"]), (2, 3, ["a", "b"]), (3, 3, ["a", "b", "c"])]


def test_tracked_without_progress_is_the_iterable():
    assert list(tracked(iter(range(3)), None)) == [0, 1, 2]


def test_tracked_needs_a_total_for_a_generator():
    calls = []
    assert list(tracked((i for i in range(2)), lambda d, t: calls.append((d, t)), total=2)) == [0, 1]
    assert calls == [(1, 2), (2, 2)]
    with pytest.raises(ValueError, match="total"):
        list(tracked((i for i in range(2)), print))


def test_check_progress_names_the_argument():
    assert check_progress(None) is None and check_progress(print) is print
    with pytest.raises(ValueError, match="on_step must be None or a callable"):
        check_progress(True, name="on_step")


def test_progress_bar_is_a_callback_or_none():
    assert progress_bar("x", enabled=False) is None
    report = progress_bar("x")
    for done in range(1, 4):
        report(done, 3)
    report(1, 2)  # a new total starts a new bar
    report(2, 2)


def test_context_gives_a_callback_only_when_interactive():
    assert Context(show_progress=False).progress_callback("fit") is None
    assert callable(Context(show_progress=True).progress_callback("fit"))
