"""The pass catalogue: every pass by its Shardy name, declared once, where it is implemented.

A pass module declares each pass it implements with `sdy_pass`::

    @sdy_pass("sdy-import-func-calls")
    def import_func_calls(module: Module, add_data_flow_edges_on_named_computations: bool = True):

The keyword parameters with defaults are the pass's options, Shardy's names in snake_case
(``add-data-flow-edges-on-named-computations``); the catalogue builds a frozen options
dataclass from them (`PassInfo.options_type`). A pass that takes a single options value names
its class instead (``@sdy_pass("sdy-basic-propagate", options=PropagationOptions)``). A func
pass (``anchor=FUNC``) takes one ``func.func`` op and runs on every func of the module, in
order, as MLIR's pass manager runs a pass nested under ``func.func``.

Pipelines call pass functions directly. The catalogue serves those who name passes: the
command line's ``--pass``, `ShardedModule.propagate`, the fuzzer and the tests. It accepts what
``sdy_opt``/``mlir-opt`` users write: ``name{opt=value ...}``, a comma chain ``a,b``, and a
pass pipeline ``builtin.module(a,func.func(b))``.

Pass modules are imported on the first lookup (`_PASS_MODULES`), so that loading this module
(``shardwise --help``) does not load the engine.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from shardwise.errors import ShardwiseError
from shardwise.ir import Module

__all__ = [
    "MODULE",
    "FUNC",
    "PassInfo",
    "PassSpec",
    "sdy_pass",
    "get_pass",
    "pass_names",
    "parse_pipeline",
    "prepare_pass",
    "run_pass",
    "run_on_funcs",
]

MODULE, FUNC = "module", "func"

# Every module that declares passes; imported on the first lookup by name.
_PASS_MODULES = (
    "shardwise.rules.populate",
    "shardwise.imports.add_data_flow_edges",
    "shardwise.imports.add_func_data_flow_edges",
    "shardwise.imports.apply_sharding_constraints",
    "shardwise.imports.constant_or_scalar_splitter",
    "shardwise.imports.flatten_call_graph",
    "shardwise.imports.import_func_calls",
    "shardwise.imports.import_pipeline",
    "shardwise.imports.lift_inlined_meshes",
    "shardwise.imports.manual_axes_cleanup",
    "shardwise.imports.pre_order_funcs",
    "shardwise.imports.propagate_sharding_from_func_to_call",
    "shardwise.imports.remove_size_one_axes",
    "shardwise.imports.sharding_group_import",
    "shardwise.imports.symbol_dce",
    "shardwise.propagation.aggressive_propagation",
    "shardwise.propagation.basic_propagation",
    "shardwise.propagation.op_priority_propagation",
    "shardwise.propagation.propagation_pipeline",
    "shardwise.propagation.user_priority_propagation",
    "shardwise.export.close_shardings",
    "shardwise.export.constant_or_scalar_merger",
    "shardwise.export.convert_global_to_local.driver",
    "shardwise.export.drop_sharding_and_mesh",
    "shardwise.export.drop_sharding_rules",
    "shardwise.export.explicit_gather_scatter_batching",
    "shardwise.export.explicit_reshards.insert_explicit_reshards",
    "shardwise.export.export_named_computations",
    "shardwise.export.export_pipeline",
    "shardwise.export.inline_meshes",
    "shardwise.export.insert_func_call_reshards",
    "shardwise.export.pad_for_divisibility",
    "shardwise.export.propagate_to_func_results",
    "shardwise.export.remove_all_gather_reduce_scatter_for_cmv1",
    "shardwise.export.remove_propagation_debug_info",
    "shardwise.export.remove_sharding_groups",
    "shardwise.export.remove_sub_axes_in_input_output_shardings",
    "shardwise.export.reshard_to_collectives.conversion",
    "shardwise.export.resolve_permutation_factors",
    "shardwise.export.sharding_constraint_to_reshard",
    "shardwise.export.sink_data_flow_edges",
    "shardwise.export.sink_func_data_flow_edges",
    "shardwise.export.unflatten_call_graph",
    "shardwise.export.unlabelled_patterns",
    "shardwise.export.update_non_divisible_input_output_shardings",
    "shardwise.export.verify_unreduced_axes",
    "shardwise.partition",
)

_CATALOGUE: dict[str, PassInfo] = {}
_loaded = False


@dataclass(frozen=True, slots=True)
class PassInfo:
    """One pass: its Shardy name, the function, its options type and its anchor."""

    name: str
    function: Callable[..., Any]
    # The options type; None: a dataclass of the function's keyword parameters, built on first
    # use of `options_type` (building one costs ~0.4 ms; a command declares ~35 passes and
    # looks up one or two).
    declared_options: type | None
    anchor: str = MODULE
    takes_options_value: bool = False  # `function(module, options)` rather than keywords
    # Shardy nests it under ``func.func`` while ours runs over the module, each func on its own
    # (same result): a pipeline may name it either way.
    nests_in_func: bool = False

    @property
    def options_type(self) -> type:
        if self.declared_options is not None:
            return self.declared_options
        return _options_from_signature(self.name, self.function)

    def parse_options(self, options: Mapping[str, str]) -> Any:
        """Shardy's ``{name: text}`` spelling -> an `options_type` value; raises on a mistake."""
        convert = getattr(self.options_type, "from_pass_options", None)
        if convert is not None:
            return convert(dict(options))
        known = {f.name: f for f in dataclasses.fields(self.options_type)}
        values: dict[str, Any] = {}
        for key, raw in options.items():
            field = known.get(key.replace("-", "_"))
            if field is None and not known:
                raise ShardwiseError(f"pass '{self.name}' takes no options, got: {key}")
            if field is None:
                choices = ", ".join(n.replace("_", "-") for n in known) or "none"
                raise ShardwiseError(
                    f"unknown option '{key}' for pass '{self.name}'; known options: {choices}"
                )
            values[field.name] = _convert(self.name, key, raw, field.default)
        return self.options_type(**values)

    def run(self, module: Module, options: Any = None) -> None:
        """Run on `module` with an `options_type` value (the defaults when None)."""
        if options is None:
            options = self.options_type()
        if self.takes_options_value:
            args: tuple[Any, ...] = (options,)
            kwargs: dict[str, Any] = {}
        else:
            args, kwargs = (), {f.name: getattr(options, f.name) for f in _fields(options)}
        if self.anchor == FUNC:
            run_on_funcs(module, self.function, *args, **kwargs)
        else:
            self.function(module, *args, **kwargs)


def _fields(options: Any) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(options)


def _convert(pass_name: str, key: str, raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        if raw not in ("true", "false", "1", "0"):
            raise ShardwiseError(
                f"option '{key}' of pass '{pass_name}' expects true or false, got '{raw}'"
            )
        return raw in ("true", "1")
    if isinstance(default, int):
        try:
            return int(raw)
        except ValueError:
            raise ShardwiseError(
                f"option '{key}' of pass '{pass_name}' expects an integer, got '{raw}'"
            ) from None
    return raw


def _option_parameters(name: str, function: Callable[..., Any]) -> list[inspect.Parameter]:
    """`function`'s keyword parameters with defaults (its options); raises on one without."""
    options = []
    for p in list(inspect.signature(function).parameters.values())[1:]:
        if p.kind is inspect.Parameter.VAR_KEYWORD or p.default is None:
            continue  # a hook for pipelines (e.g. ops the caller already found), not an option
        if p.default is inspect.Parameter.empty:
            raise TypeError(f"pass '{name}': parameter '{p.name}' needs a default (an option)")
        options.append(p)
    return options


@functools.cache
def _options_from_signature(name: str, function: Callable[..., Any]) -> type:
    """A frozen dataclass of `function`'s keyword parameters with defaults (its options)."""
    specs = [
        (p.name, type(p.default), dataclasses.field(default=p.default))
        for p in _option_parameters(name, function)
    ]
    class_name = "".join(part.capitalize() for part in name.replace(".", "-").split("-"))
    return dataclasses.make_dataclass(f"{class_name}Options", specs, frozen=True, slots=True)


def sdy_pass(
    name: str, *, options: type | None = None, anchor: str = MODULE, nests_in_func: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare `function` as the pass `name` (Shardy's spelling); returns it unchanged.

    `nests_in_func`: Shardy anchors the pass on ``func.func`` but `function` takes the module
    (and treats each func on its own), so ``func.func(name)`` in a pipeline is accepted."""

    def declare(function: Callable[..., Any]) -> Callable[..., Any]:
        if name in _CATALOGUE:
            raise ValueError(f"pass '{name}' is declared twice")
        if options is None:
            _option_parameters(name, function)  # a parameter without a default fails here
        _CATALOGUE[name] = PassInfo(
            name, function, options, anchor, options is not None, nests_in_func
        )
        return function

    return declare


@sdy_pass("none")
def _no_pass(module: Module) -> None:
    """Only load and write the module."""


def _load_catalogue() -> None:
    global _loaded
    if not _loaded:
        for module_name in _PASS_MODULES:
            importlib.import_module(module_name)
        _loaded = True


def pass_names() -> list[str]:
    """Every pass name, sorted."""
    _load_catalogue()
    return sorted(_CATALOGUE)


# Where a pass's module is, by the layout's rule "a file per pass, named after it":
# ``sdy-lift-inlined-meshes`` -> ``imports/lift_inlined_meshes.py`` (or a package of that name).
# A lookup imports that module alone (a command pays for the passes it runs, not for the whole
# catalogue); a pass the rule does not find (``canonicalize``, ...) loads the catalogue.


def _conventional_modules(name: str) -> list[str]:
    stem = name.removeprefix("sdy-").removeprefix("shardwise-").replace("-", "_")
    stems = {stem, stem.replace("_propagate", "_propagation")}
    return [m for m in _PASS_MODULES if stems & set(m.split(".")[1:])]


def _load_by_convention(name: str) -> None:
    for module_name in _conventional_modules(name):
        importlib.import_module(module_name)
        if name in _CATALOGUE:
            return


def get_pass(name: str) -> PassInfo:
    """The pass called `name`; raises `ShardwiseError` naming the known passes."""
    info = _CATALOGUE.get(name)
    if info is None:
        _load_by_convention(name)
        info = _CATALOGUE.get(name)
    if info is None:
        _load_catalogue()
        info = _CATALOGUE.get(name)
    if info is None:
        raise ShardwiseError(f"unknown pass '{name}'; known passes: {', '.join(pass_names())}")
    return info


# -- pass pipelines as text ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PassSpec:
    """One pass of a pipeline: its name, its options as written, and whether it sat under
    ``func.func(...)``."""

    name: str
    options: tuple[tuple[str, str], ...] = ()
    nested_in_func: bool = False


def parse_pipeline(text: str) -> list[PassSpec]:
    """``builtin.module(a{x=1},func.func(b))`` or ``a,b`` -> the passes in order.

    Raises `ShardwiseError` with the position of a syntax mistake.
    """
    parser = _PipelineParser(text)
    specs = parser.parse()
    if not specs:
        raise ShardwiseError("empty pass pipeline: expected a pass name, e.g. sdy-basic-propagate")
    return specs


class _PipelineParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> list[PassSpec]:
        specs = self._list(nested_in_func=False, top=True)
        self._skip_spaces()
        if self.pos != len(self.text):
            self._fail("expected ',' or the end of the pipeline")
        return specs

    def _fail(self, message: str) -> None:
        raise ShardwiseError(
            f"bad pass pipeline '{self.text}' at column {self.pos + 1}: {message} "
            "(e.g. 'sdy-aggressive-propagate{conservative-propagation=true}' or "
            "'builtin.module(sdy-propagation-pipeline,func.func(sdy-insert-explicit-reshards))')"
        )

    def _skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _name(self) -> str:
        self._skip_spaces()
        start = self.pos
        while self.pos < len(self.text) and (
            self.text[self.pos].isalnum() or self.text[self.pos] in "-_."
        ):
            self.pos += 1
        if self.pos == start:
            self._fail("expected a pass name")
        return self.text[start : self.pos]

    def _list(self, nested_in_func: bool, top: bool = False) -> list[PassSpec]:
        specs: list[PassSpec] = []
        while True:
            specs.extend(self._item(nested_in_func, top))
            self._skip_spaces()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
                continue
            return specs

    def _item(self, nested_in_func: bool, top: bool) -> list[PassSpec]:
        name = self._name()
        self._skip_spaces()
        if self.pos < len(self.text) and self.text[self.pos] == "(":
            if name not in ("builtin.module", "func.func"):
                self._fail(f"'{name}(...)' is not an op pipeline: use builtin.module or func.func")
            if name == "builtin.module" and not top:
                self._fail("builtin.module(...) may only enclose the whole pipeline")
            self.pos += 1
            inner = self._list(nested_in_func or name == "func.func")
            self._skip_spaces()
            if self.pos >= len(self.text) or self.text[self.pos] != ")":
                self._fail("expected ')'")
            self.pos += 1
            return inner
        return [PassSpec(name, self._options(), nested_in_func)]

    def _options(self) -> tuple[tuple[str, str], ...]:
        if self.pos >= len(self.text) or self.text[self.pos] != "{":
            return ()
        close = self._matching_brace(self.pos)
        body = self.text[self.pos + 1 : close]
        self.pos = close + 1
        options = []
        for item in _split_options(body):
            key, eq, value = item.partition("=")
            if not eq or not key or not value:
                raise ShardwiseError(
                    f"bad pass option '{item}' in '{self.text}': expected name=value"
                )
            options.append((key, value))
        return tuple(options)

    def _matching_brace(self, start: int) -> int:
        depth = 0
        for i in range(start, len(self.text)):
            if self.text[i] == "{":
                depth += 1
            elif self.text[i] == "}":
                depth -= 1
                if depth == 0:
                    return i
        self.pos = start
        self._fail("'{' without its '}'")
        raise AssertionError  # unreachable: _fail raises


def _split_options(body: str) -> list[str]:
    """``a=1 b=x,y`` -> ``["a=1", "b=x,y"]``: options are separated by spaces (MLIR's form);
    a comma is part of a value (``enable-patterns=p1,p2``) unless it ends a ``key=value``
    followed by another key (``a=1,b=2``, the form this tool accepted before)."""
    items: list[str] = []
    for chunk in body.split():
        for part in chunk.split(","):
            if "=" in part or not items:
                items.append(part)
            else:
                items[-1] += "," + part
    return [item for item in items if item]


# -- running passes by name ---------------------------------------------------------------------


def prepare_pass(spec: str) -> Callable[[Module], None]:
    """Parse `spec` (a pass, a chain or a pipeline), check every pass and option, return the
    runner. Every mistake in `spec` raises `ShardwiseError` here, before any module is read."""
    steps = []
    for pass_spec in parse_pipeline(spec):
        info = get_pass(pass_spec.name)
        if pass_spec.nested_in_func and info.anchor != FUNC and not info.nests_in_func:
            raise ShardwiseError(
                f"pass '{info.name}' runs on the module, not under func.func(...): "
                "move it out of func.func(...)"
            )
        steps.append((info, info.parse_options(dict(pass_spec.options))))

    def run(module: Module) -> None:
        for i, (info, options) in enumerate(steps):
            info.run(module, options)
            if i + 1 < len(steps):
                _verify_between(module, info.name)

    return run


def _verify_between(module: Module, name: str) -> None:
    """Verify the module a pass of a chain leaves for the next one, as MLIR's pass manager
    does after each pass: a pass that writes an invalid module stops the chain there (the last
    pass's module is verified when it is written)."""
    from shardwise.errors import VerifyError
    from shardwise.verify import verify_module

    try:
        verify_module(module)
        if module.types_changed and module.verify_types is not None:
            module.verify_types(module)  # local or padded types: the ops' own type checks
    except VerifyError as e:
        raise VerifyError(f"after pass '{name}': {e.message}", e.location, e.notes) from None


def run_pass(module: Module, spec: str) -> Module:
    """Run `spec` (a pass with optional ``{options}``, a chain or a pipeline) on `module`."""
    prepare_pass(spec)(module)
    return module


def run_on_funcs(module: Module, function: Callable[..., Any], *args: Any, **options: Any) -> None:
    """Call a func pass's function on every ``func.func`` of `module`, in order (`Module.funcs`
    is a fresh list: a pass may add or erase funcs)."""
    for func in module.funcs:
        function(func, *args, **options)
