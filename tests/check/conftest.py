"""One XLA worker process (8 simulated CPU devices) for every test under tests/check."""

import pytest

from shardwise.check import executor as executor_module
from shardwise.check.executor import Executor


@pytest.fixture(scope="session")
def executor():
    """The worker; the command line's `shared_executor` is this one too while tests run."""
    with Executor(devices=8).start() as ex:
        previous, executor_module._SHARED = executor_module._SHARED, ex
        try:
            yield ex
        finally:
            executor_module._SHARED = previous
