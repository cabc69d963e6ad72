"""`sdy-pre-order-funcs`: funcs reordered so that callers come before callees (Shardy's
`import/pre_order_funcs.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Module,
    Op,
    detach,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import (
    funcs_in_call_graph_order,
    has_body,
)

__all__ = [
    "pre_order_funcs",
]


@sdy_pass("sdy-pre-order-funcs")
def pre_order_funcs(module: Module, without_calls: bool = False) -> None:
    """Move the funcs to the end of the module in call-graph pre-order (callers first).

    `without_calls`: the caller knows that no func holds a ``func.call`` (every call was
    imported as a named computation), so the call graph is read without a walk.
    """
    calls: dict[Op, list[Op]] | None = (
        {f: [] for f in module.funcs if has_body(f)} if without_calls else None
    )
    for func in funcs_in_call_graph_order(module, pre_order=True, calls=calls):
        detach(func)
        module.body.append(func)
