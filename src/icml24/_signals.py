"""Ctrl-C deferred over a block that must not be torn in half (a spawn, a library's import)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Ctrl-C during the block takes effect when it ends.

    SIGINT is blocked in this thread (a child process or thread started inside inherits the mask, so its start-up
    cannot be hit either), and in the main thread a recording handler stands in: another thread may take the
    signal, and Python would then raise KeyboardInterrupt here mid-block. A KeyboardInterrupt raised inside an
    import can surface as another exception (CPython wraps it in ``RuntimeError`` in a ``__set_name__``; a C++
    extension aborts the process), which is why imports run under this too.
    """
    caught: list[int] = []
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum)) if in_main else None
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        if in_main:
            signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
        previous(signal.SIGINT, None)  # Python's default handler raises KeyboardInterrupt
