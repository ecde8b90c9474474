import os
import signal

import pytest

from icml24._signals import sigint_deferred


@pytest.fixture(autouse=True)
def _python_default_handler():
    """These tests are about Python's own Ctrl-C handler; a test run started in the background without job control
    (``cmd &`` in a script, as nohup does) inherits SIGINT ignored, so each test installs the default handler and puts
    back what was there."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_the_block_is_raised_when_it_ends_not_inside():
    reached_end = False
    with pytest.raises(KeyboardInterrupt):
        with sigint_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            signal.pthread_sigmask(signal.SIG_BLOCK, set())  # a bytecode boundary where Python would run a handler
            reached_end = True
    assert reached_end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_no_ctrl_c_means_no_interrupt_and_the_handler_is_restored():
    with sigint_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_an_ignored_ctrl_c_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with sigint_deferred():
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
