"""The ``icml24`` console script: the CLI, with Ctrl-C at any moment (start-up included) one line and exit 130."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

from icml24._signals import sigint_deferred


def guarded(call: Callable[[], int]) -> int:
    """``call()``'s exit status, or 130 with one line when Ctrl-C lands anywhere in it (a second one included)."""
    try:
        return call()
    except KeyboardInterrupt:  # at start-up, or a second Ctrl-C while the first was being handled
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a third one cannot interrupt this line
        sys.stderr.write("interrupted: what finished is stored; run the same command again to resume\n")
        return 130


def _cli() -> int:
    with sigint_deferred():  # importing the CLI takes a moment; an interrupt mid-import can become another error
        from icml24.cli import main as cli_main
    return cli_main()


def main() -> None:
    code = guarded(_cli)
    if code == 130:  # Python would turn an interrupt that was caught during start-up into death by SIGINT (-2)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)
