"""Test helpers: write axes, shardings and factor shardings in Shardy notation.

- `axes('"a", "b":(1)2')` -> a tuple of `AxisRef`;
- `sharding('[{"a", ?}, {}] replicated={"b"}')` -> `TensorSharding` on ``@mesh``;
- `fs('["a", ?]')` -> an open `FactorSharding` (``?`` = open, as in dimension shardings);
  ``overflow=[...]`` adds overflow axes; `minor=True` marks it minor-most;
- `tfs({0: '["a", ?]', 2: '[]'}, replicated='"c"')` -> `TensorFactorShardings`.
"""

from __future__ import annotations

import re

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.propagation.projection import FactorSharding, TensorFactorShardings
from shardwise.sharding import DimensionSharding, TensorSharding

_AXIS_RE = re.compile(r'"([^"]+)"(?::\((\d+)\)(\d+))?')
_DIM_RE = re.compile(r"\{([^}]*)\}")


def axes(text: str) -> tuple[AxisRef, ...]:
    result = []
    for name, pre, size in _AXIS_RE.findall(text):
        sub = SubAxisInfo(int(pre), int(size)) if pre else None
        result.append(AxisRef(name, sub))
    return tuple(result)


def _clause(text: str, label: str) -> tuple[AxisRef, ...]:
    match = re.search(label + r"=\{([^}]*)\}", text)
    return axes(match.group(1)) if match else ()


def sharding(text: str, mesh_name: str = "mesh") -> TensorSharding:
    dims_text = text[: text.index("]") + 1]
    dims = tuple(
        DimensionSharding(axes(body), is_closed="?" not in body)
        for body in _DIM_RE.findall(dims_text)
    )
    return TensorSharding(mesh_name, dims, _clause(text, "replicated"), _clause(text, "unreduced"))


def fs(text: str, minor: bool = False) -> FactorSharding:
    main, _, overflow = text.partition("overflow=")
    return FactorSharding(
        axis_refs=axes(main),
        is_closed="?" not in main,
        is_minor_most=minor,
        overflow_axes=axes(overflow),
    )


def tfs(
    factors: dict[int, str | FactorSharding],
    replicated: str = "",
    unreduced: str = "",
) -> TensorFactorShardings:
    shardings = {f: (s if isinstance(s, FactorSharding) else fs(s)) for f, s in factors.items()}
    return TensorFactorShardings(shardings, axes(replicated), axes(unreduced))


def show(tensor: TensorFactorShardings) -> dict[int, str]:
    """Factor index -> printed factor sharding (``["a", ?]``), for readable assertions."""
    return {f: str(s) for f, s in tensor.factor_index_to_sharding.items()}
