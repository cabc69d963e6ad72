"""The rule families; importing this package registers every rule."""

from shardwise.rules.ops import (  # noqa: F401
    collectives,
    custom_call,
    dot_conv,
    elementwise,
    gather_scatter,
    linalg,
    misc,
    reduce,
    reshape_broadcast,
    slicing,
)
