"""The pass registry: Shardy pass name -> a function that transforms our IR in place.

One table, `PASSES`, used by the command line (``shardwise propagate --pass NAME``) and by
anyone who wants to run a pass by its Shardy name. A pass is ``fn(module, options)`` where
`options` is the ``{name: value}`` dict of Shardy's option spelling
(``sdy-basic-propagate{keep-sharding-rules=true}`` -> ``{"keep-sharding-rules": "true"}``);
each pass turns that into its own frozen options value.

Entries are imported lazily (``"module:function"`` strings) so that ``shardwise --help`` does
not load the whole engine, and so an entry can name a module that is not written yet.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from shardwise.errors import ShardwiseError
from shardwise.ir import Module

__all__ = [
    "Pass",
    "PassFn",
    "PASSES",
    "register_pass",
    "get_pass",
    "pass_names",
    "parse_pass_spec",
    "prepare_pass",
    "run_pass",
]

PassFn = Callable[[Module, Mapping[str, str]], Any]


@dataclass(frozen=True, slots=True)
class Pass:
    """A registered pass: `check` validates options up front (before any input is read)."""

    run: Callable[[Module, Mapping[str, str]], Any]
    check: Callable[[Mapping[str, str]], Any]

    def __call__(self, module: Module, options: Mapping[str, str]) -> Any:
        return self.run(module, options)


def _no_options(name: str) -> Callable[[Mapping[str, str]], None]:
    def check(options: Mapping[str, str]) -> None:
        if options:
            raise ShardwiseError(f"pass '{name}' takes no options, got: {', '.join(options)}")

    return check


def _propagation_options(options: Mapping[str, str]) -> Any:
    from shardwise.propagation.options import PropagationOptions

    return PropagationOptions.from_pass_options(dict(options))


def _propagation(function: str) -> Pass:
    def run(module: Module, options: Mapping[str, str]) -> None:
        fn = _resolve(f"shardwise.propagation.passes:{function}")
        fn(module, _propagation_options(options))

    return Pass(run, _propagation_options)


def _check_populate_options(options: Mapping[str, str]) -> bool:
    unknown = set(options) - {"conservative-propagation"}
    if unknown:
        raise ShardwiseError(
            f"unknown option(s) {', '.join(sorted(unknown))} for "
            "'sdy-populate-op-sharding-rules'; known: conservative-propagation"
        )
    return _bool_option(options, "conservative-propagation")


def _populate_rules(module: Module, options: Mapping[str, str]) -> None:
    fn = _resolve("shardwise.rules.populate:populate_op_sharding_rules")
    fn(module, conservative=_check_populate_options(options))


PASSES: dict[str, PassFn | str] = {
    "none": Pass(lambda module, options: None, _no_options("none")),
    "sdy-aggressive-propagate": _propagation("aggressive_propagate"),
    "sdy-basic-propagate": _propagation("basic_propagate"),
    "sdy-op-priority-propagate": _propagation("op_priority_propagate"),
    "sdy-populate-op-sharding-rules": Pass(_populate_rules, _check_populate_options),
    "sdy-user-priority-propagate": _propagation("user_priority_propagate"),
}


def _pipeline(module: Module, options: Mapping[str, str]) -> None:
    fn = _resolve("shardwise.propagation.pipeline:propagation_pipeline")
    fn(module, _propagation_options(options))


def _transform(table: str, name: str) -> Pass:
    """A pass from one of the import/export tables: ``fn(module, **snake_case_options)``."""

    def convert(options: Mapping[str, str]) -> dict[str, object]:
        values: dict[str, object] = {}
        for key, raw in options.items():
            values[key.replace("-", "_")] = {"true": True, "false": False}.get(raw, raw)
        return values

    def run(module: Module, options: Mapping[str, str]) -> None:
        module_name, _, attr = table.partition(":")
        fn = getattr(importlib.import_module(module_name), attr)[name]
        try:
            fn(module, **convert(options))
        except TypeError as e:
            if "unexpected keyword" not in str(e):
                raise
            raise ShardwiseError(
                f"pass '{name}' does not take option(s) {', '.join(options)}"
            ) from None

    return Pass(run, convert)


def _flag_pass(name: str, target: str, flags: Mapping[str, str]) -> Pass:
    """A pass whose options are booleans: Shardy's spelling -> keyword of `target`, checked
    up front like every other pass's options."""

    def check(options: Mapping[str, str]) -> dict[str, bool]:
        unknown = set(options) - set(flags)
        if unknown:
            raise ShardwiseError(
                f"unknown option(s) {', '.join(sorted(unknown))} for '{name}'; "
                f"known: {', '.join(flags)}"
            )
        return {flags[key]: _bool_option(options, key) for key in options}

    def run(module: Module, options: Mapping[str, str]) -> None:
        _resolve(target)(module, **check(options))

    return Pass(run, check)


def _export_options(options: Mapping[str, str]) -> Any:
    """``sdy-export-pipeline`` options (Shardy's spelling) -> `ExportOptions`, all booleans."""
    from shardwise.export.pipeline import ExportOptions

    known = {f.name for f in fields(ExportOptions)}
    values: dict[str, bool] = {}
    for key in options:
        name = key.replace("-", "_")
        if name not in known:
            choices = ", ".join(sorted(n.replace("_", "-") for n in known))
            raise ShardwiseError(
                f"unknown option '{key}' for 'sdy-export-pipeline'; known: {choices} "
                "(module dumps, dump-directory, are not reproduced)"
            )
        values[name] = _bool_option(options, key)
    return ExportOptions(**values)


def _export_pipeline(module: Module, options: Mapping[str, str]) -> None:
    fn = _resolve("shardwise.export.pipeline:export_pipeline")
    fn(module, _export_options(options))


def _register_transform_tables() -> None:
    """The import and export passes, by their Shardy names (tables imported lazily)."""
    import shardwise.export.passes as export_passes
    import shardwise.imports as import_passes

    for table, names in (
        ("shardwise.imports:PASSES", import_passes.PASSES),
        ("shardwise.export.passes:PASSES", export_passes.PASSES),
    ):
        for name in names:
            PASSES.setdefault(name, _transform(table, name))


PASSES["sdy-propagation-pipeline"] = Pass(_pipeline, _propagation_options)
PASSES["sdy-insert-explicit-reshards"] = _flag_pass(
    "sdy-insert-explicit-reshards",
    "shardwise.export.explicit_reshards:insert_explicit_reshards",
    {"enable-full-version": "enable_full_version"},
)
PASSES["sdy-reshard-to-collectives"] = _flag_pass(
    "sdy-reshard-to-collectives",
    "shardwise.export.reshard_to_collectives:reshard_to_collectives",
    {"keep-redundant-reshards": "keep_redundant_reshards"},
)
PASSES["sdy-export-pipeline"] = Pass(_export_pipeline, _export_options)
PASSES["sdy-convert-global-to-local"] = _flag_pass(
    "sdy-convert-global-to-local",
    "shardwise.export.convert_global_to_local:convert_global_to_local",
    {
        "per-dim-all-gather": "per_dim_all_gather",
        "combine-multi-dimension-reduce-scatter": "combine_multi_dimension_reduce_scatter",
        "enable-rgv3": "enable_rgv3",
    },
)


def register_pass(name: str, fn: PassFn | str) -> None:
    """Add a pass; `fn` may be a ``"module:function"`` string imported on first use."""
    if name in PASSES:
        raise ValueError(f"pass '{name}' is already registered")
    PASSES[name] = fn


def pass_names() -> list[str]:
    _register_transform_tables()
    return sorted(PASSES)


def get_pass(name: str) -> PassFn:
    """The pass called `name`; raises `ShardwiseError` naming the known passes."""
    if name not in PASSES:
        _register_transform_tables()
    entry = PASSES.get(name)
    if entry is None:
        raise ShardwiseError(f"unknown pass '{name}'; known passes: {', '.join(pass_names())}")
    if isinstance(entry, str):
        return _resolve(entry)
    return entry


_SPEC_RE = re.compile(r"^([\w.\-]+)(?:\{([^{}]*)\})?$")


def parse_pass_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"sdy-basic-propagate{a=1 b=true}"`` -> ``("sdy-basic-propagate", {"a": "1", ...})``."""
    m = _SPEC_RE.match(spec.strip())
    if m is None:
        raise ShardwiseError(
            f"bad pass '{spec}': expected NAME or NAME{{option=value ...}}, "
            "e.g. sdy-aggressive-propagate{conservative-propagation=true}"
        )
    options: dict[str, str] = {}
    for item in (m.group(2) or "").replace(",", " ").split():
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise ShardwiseError(f"bad pass option '{item}' in '{spec}': expected name=value")
        options[key] = value
    return m.group(1), options


def prepare_pass(spec: str) -> Callable[[Module], Any]:
    """Parse `spec` (name with optional ``{options}``), check the options, return the runner.

    Every mistake in `spec` raises `ShardwiseError` here, before any module is loaded.
    """
    name, options = parse_pass_spec(spec)
    fn = get_pass(name)
    if isinstance(fn, Pass):
        fn.check(options)
    return lambda module: fn(module, options)


def run_pass(module: Module, spec: str) -> Module:
    """Run the pass `spec` (name with optional ``{options}``) on `module`; returns it."""
    prepare_pass(spec)(module)
    return module


def _resolve(target: str) -> Callable[..., Any]:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            raise ShardwiseError(
                f"this pass is not available in this version of shardwise ({module_name} is "
                "missing)"
            ) from None
        raise
    fn = getattr(module, attr, None)
    if fn is None:
        raise ShardwiseError(f"this pass is not available: {module_name} has no '{attr}'")
    return fn


def _bool_option(options: Mapping[str, str], key: str) -> bool:
    raw = options.get(key, "false")
    if raw not in ("true", "false", "1", "0"):
        raise ShardwiseError(f"option '{key}' expects true or false, got '{raw}'")
    return raw in ("true", "1")
