"""The ``icml24`` console script: the CLI, with Ctrl-C at any moment (start-up included) one line and exit 130."""

# Before any other import (``from __future__`` too, which is a real import): a Ctrl-C is recorded, not raised,
# until the command line is imported. The C module ``_signal`` is built into the interpreter; ``signal`` would first
# import ``enum`` (~20 ms in which a Ctrl-C raises KeyboardInterrupt inside an import and prints its traceback). The
# package's ``__init__`` before this module uses only ``os``. What remains is the interpreter's own start-up
# (``site``) and the loading of this file, before any statement of ours can run.
import _signal

_EARLY: list[int] = []  # a Ctrl-C that came before the command line was imported
_signal.signal(_signal.SIGINT, lambda signum, frame: _EARLY.append(signum))

import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402

from icml24._signals import sigint_deferred  # noqa: E402

_INTERRUPTED = "interrupted: what finished is stored; run the same command again to resume\n"


def guarded(call: Callable[[], int]) -> int:
    """``call()``'s exit status, or 130 with one line when Ctrl-C lands anywhere in it (a second one included)."""
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's Ctrl-C again, in place of the recorder
        if _EARLY:  # Ctrl-C while this module was imported: it takes effect here, before any work
            raise KeyboardInterrupt
        return call()
    except KeyboardInterrupt:  # at start-up, or a second Ctrl-C while the first was being handled
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a third one cannot interrupt this line
        sys.stderr.write(_INTERRUPTED)
        return 130


def _cli() -> int:
    with sigint_deferred():  # importing the CLI takes a moment; an interrupt mid-import can become another error
        from icml24.cli import main as cli_main
    return cli_main()


def main() -> None:
    code = guarded(_cli)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command is over: a Ctrl-C now cannot print a traceback
    if code == 130:  # Python would turn an interrupt that was caught during start-up into death by SIGINT (-2)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)
