"""``--executor dask://HOST:PORT``: candidates run on an existing Dask `distributed` cluster.

`distributed` is the optional extra ``shardwise[dask]``; its `Client.get_executor()` is a
`concurrent.futures.Executor`, so the search needs nothing Dask-specific.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any

from shardwise.errors import InputError

__all__ = ["dask_executor"]


def dask_executor(address: str) -> Executor:
    """An executor on the scheduler at `address` (``HOST:PORT``)."""
    try:
        from distributed import Client  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # an optional extra, not installed
        raise InputError(
            f"--executor dask://{address} needs Dask's distributed: pip install 'shardwise[dask]'"
        ) from None
    try:
        client = Client(f"tcp://{address}", timeout=10)
    except OSError as e:
        raise InputError(f"--executor dask://{address}: cannot reach the scheduler: {e}") from None
    return _ClientExecutor(client)


class _ClientExecutor(Executor):
    """The client's executor, which also closes the client on shutdown: a client left open
    keeps reconnecting (and logging) after its cluster is gone."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._inner = client.get_executor()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        return self._inner.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait)
        self._client.close()
