"""The lines of one axis's chain in an explanation: every hop when short, a summary when long.

A chain runs from the explained tensor (newest step first) back to the annotation the axis
came from. Along a network it can be dozens of ops long, most of them carrying the axis on
the same dim in the same round. A long chain keeps its newest step, the steps where
something changed (the axis moved to another dim of the tensor, or the step ran in another
propagation round), the first step off the origin and the origin; each run of hops in
between becomes one line that counts them. A long path of a stopped axis keeps its ends.
"""

from __future__ import annotations

from shardwise.explain.places import origin_line
from shardwise.explain.provenance import Key, Origin, sharding_of_key
from shardwise.explain.run import Explained

__all__ = ["LONG_CHAIN", "chain_lines", "path_text"]

# Chains up to this many hops are printed whole.
LONG_CHAIN = 5


def chain_lines(ex: Explained, key: Key, axis: str, chain: list[Origin]) -> list[str]:
    """``axis "x":`` and the chain that brought it to `key`, one ``<-`` line per kept hop."""
    if len(chain) <= LONG_CHAIN:
        return [f"  axis {axis}:"] + [f"    <- {origin_line(ex, o)}" for o in chain]
    # Hop i put the axis on targets[i], coming from chain[i].source.
    targets = [key] + [o.source for o in chain[:-1]]
    moves = [_move(ex, axis, o, t) for o, t in zip(chain, targets, strict=True)]
    kept = [0]
    kept += [
        i for i in range(1, len(chain) - 1) if moves[i] or chain[i].round != chain[i - 1].round
    ]
    kept += [len(chain) - 2, len(chain) - 1]  # the first step off the origin, the origin
    kept = sorted(set(kept))
    lines = [f"  axis {axis}: {len(chain)} steps, {len(kept)} shown"]
    previous = -1
    for i in kept:
        skipped = i - previous - 1
        if skipped:
            lines.append(f"    <- ... {skipped} ops carry it on, same dim, same round ...")
        lines.append(f"    <- {origin_line(ex, chain[i])}{moves[i]}")
        previous = i
    return lines


def _move(ex: Explained, axis: str, origin: Origin, target: Key | None) -> str:
    """`` [dim 1 -> dim 0]`` if the step put the axis on another dim than its source's."""
    if origin.op is None or origin.source is None or target is None:
        return ""
    before, after = _dim_of(ex, origin.source, axis), _dim_of(ex, target, axis)
    return "" if before == after else f" [dim {before} -> dim {after}]"


def _dim_of(ex: Explained, key: Key, axis: str) -> int | None:
    sharding = ex.observer.final.get(key)
    if sharding is None:
        sharding = sharding_of_key(ex.module, key)
    if sharding is None:
        return None
    base = axis.split(":")[0]
    for d, dim in enumerate(sharding.dim_shardings):
        if any(str(a).split(":")[0] == base for a in dim.axes):
            return d
    return None


def path_text(names: list[str], keep: int = 3) -> str:
    """``a -> b -> c``; a long path keeps its ends: ``a -> b -> c -> (5 more) -> x -> y -> z``."""
    if len(names) <= 2 * keep + 1:
        return " -> ".join(names)
    hidden = len(names) - 2 * keep
    return " -> ".join(names[:keep] + [f"({hidden} more)"] + names[-keep:])
