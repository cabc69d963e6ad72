"""The executor never waits forever on its worker."""

import subprocess
import sys

import pytest

from shardwise.check.executor import ExecutionError, Executor


def test_a_worker_that_never_answers_is_killed():
    executor = Executor(timeout=0.2)
    silent = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE, text=True
    )
    with pytest.raises(ExecutionError, match="no answer from XLA within 0.2 s"):
        executor._read_reply(silent)
    assert silent.poll() is not None  # killed, not left running
