"""``--executor dask://HOST:PORT``: candidates run on an existing Dask `distributed` cluster.

`distributed` is the optional extra ``shardwise[dask]``; its `Client.get_executor()` is a
`concurrent.futures.Executor`, so the search needs nothing Dask-specific.
"""

from __future__ import annotations

from concurrent.futures import Executor

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
    return client.get_executor()
