"""``shardwise validate-rule``: check a rule numerically against a numpy implementation.

    shardwise validate-rule "i j, j k -> i k" --reduction j --fn numpy:matmul --shapes 8x16,16x4

Each splittable factor is checked (see `shardwise.rules.validate`); exit 1 if one fails.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from shardwise.errors import ShardwiseError
from shardwise.ir import TensorType

__all__ = ["build_parser", "run"]


def build_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "rule", help='the rule, e.g. "i j, j k -> i k" (JAX custom_partitioning notation)'
    )
    parser.add_argument("--fn", required=True, help="the op as MODULE:FUNCTION, e.g. numpy:matmul")
    parser.add_argument(
        "--shapes",
        required=True,
        help="operand shapes, comma separated, e.g. 8x16,16x4 ('' = scalar)",
    )
    for kind in ("reduction", "need-replication", "permutation"):
        parser.add_argument(f"--{kind}", action="append", default=[], metavar="FACTOR")
    parser.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="FACTOR=N",
        help="size of a factor used only in compound dims",
    )
    parser.add_argument("--split", type=int, default=2, help="devices per factor (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def _load_fn(spec: str):
    module_name, sep, attr = spec.partition(":")
    if not sep:
        raise ShardwiseError(f"--fn expects MODULE:FUNCTION, got '{spec}'")
    try:
        target = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as e:
        raise ShardwiseError(f"cannot load --fn '{spec}': {e}") from None
    return target


def _shape(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.split("x")) if text else ()
    except ValueError:
        raise ShardwiseError(
            f"bad shape '{text}': expected sizes joined by 'x', e.g. 8x16"
        ) from None


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from shardwise.rules.custom import parse_rule_spec, rule_from_spec
    from shardwise.rules.validate import validate_rule

    sizes = {}
    for item in args.size:
        name, _, value = item.partition("=")
        sizes[name] = int(value)
    spec = parse_rule_spec(
        args.rule,
        reduction_factors=args.reduction,
        need_replication_factors=args.need_replication,
        permutation_factors=args.permutation,
        factor_sizes=sizes,
    )
    fn = _load_fn(args.fn)
    rng = np.random.default_rng(args.seed)
    operands = [rng.standard_normal(_shape(s)) for s in args.shapes.split(",")]
    results = fn(*operands)
    results = results if isinstance(results, (tuple, list)) else (results,)
    rule = rule_from_spec(
        spec,
        [TensorType(x.shape, "f64") for x in operands],
        [TensorType(np.shape(r), "f64") for r in results],
    )
    print(rule)
    checks = validate_rule(rule, fn, operands, k=args.split)
    for check in checks:
        print(check)
    failed = [c for c in checks if not c.ok]
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed", file=sys.stderr)
    return 1 if failed else 0
