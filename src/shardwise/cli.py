"""The ``shardwise`` command line: verify, propagate, rules.

Every failure prints ``file:line:col: error: message``, the source line and a caret, and exits
1 (2 for usage errors); ``--debug`` adds the Python traceback. Nothing else reaches a user.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardwise import __version__, passes
from shardwise.errors import InputError, InternalError, Location, ShardwiseError
from shardwise.ir import Module, Op

__all__ = ["main", "console_main", "build_parser", "DEFAULT_PASS", "EXAMPLE"]

DEFAULT_PASS = "sdy-propagation-pipeline"
EXAMPLE = "gpt_block.mlir"
EXIT_OK, EXIT_ERROR = 0, 1  # usage errors: argparse exits 2


@dataclass(frozen=True, slots=True)
class _Input:
    """One input: the name shown in messages and its text."""

    name: str
    text: str


class _UsageError(Exception):
    """Bad command-line usage detected after argparse (exit 2)."""


# -- inputs and outputs ------------------------------------------------------------------------


def _read_input(arg: str) -> _Input:
    from shardwise.io.mlir import decode_text, read_text_file

    if arg == "-":
        return _Input("<stdin>", decode_text(sys.stdin.buffer.read(), "<stdin>"))
    return _Input(arg, read_text_file(arg))


def _bundled_example() -> _Input:
    from importlib import resources

    path = resources.files("shardwise.examples").joinpath(EXAMPLE)
    return _Input(f"<bundled example>/{EXAMPLE}", path.read_text(encoding="utf-8"))


def _load(inp: _Input, args: argparse.Namespace) -> Module:
    from shardwise.io.mlir import load_text

    return load_text(inp.text, inp.name, args.allow_unregistered_dialect)


def _output_targets(inputs: list[str], output: str | None) -> list[Path | None]:
    """Where each input's result goes: None = stdout; a directory for several inputs."""
    if output is None:
        return [None] * max(len(inputs), 1)
    out = Path(output)
    if len(inputs) > 1 or out.is_dir() or output.endswith(("/", "\\")):
        if out.exists() and not out.is_dir():
            raise _UsageError(f"-o {output}: several inputs need -o to name a directory")
        names = [Path(i).name if i != "-" else "stdin.mlir" for i in inputs] or [EXAMPLE]
        if len(set(names)) != len(names):
            raise _UsageError("two inputs have the same file name; they would overwrite each other")
        _make_directory(out)
        return [out / n for n in names]
    return [out]


def _make_directory(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            f"cannot create the output directory: {e.strerror}", Location(str(path))
        ) from None


def _emit(module: Module, target: Path | None, generic: bool) -> None:
    from shardwise.io.mlir import write_file, write_text

    if target is None:
        sys.stdout.write(write_text(module, generic=generic))
        sys.stdout.flush()
        return
    write_file(module, target, generic=generic)


# -- commands ----------------------------------------------------------------------------------


def _cmd_verify(args: argparse.Namespace) -> int:
    """Shardy's verifier, then what propagation would reject (`propagation.preconditions`)."""
    from shardwise.propagation.preconditions import propagation_precondition_error

    status = EXIT_OK
    for arg in args.inputs:
        inp = None
        try:
            inp = _read_input(arg)
            module = _load(inp, args)
            error = propagation_precondition_error(module)
            if error is not None:
                raise error
        except ShardwiseError as e:
            _report(e, inp.text if inp is not None else None)
            status = EXIT_ERROR
            continue
        except (KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as e:  # noqa: BLE001 - a bug: report it for this input, go on
            _internal_error(e, args.debug, inp.name if inp is not None else arg, "verify")
            status = EXIT_ERROR
            continue
        print(f"{inp.name}: ok")
    return status


def _transform(
    args: argparse.Namespace, transform: Callable[[Module], object], pass_name: str
) -> int:
    """Load each input (or the bundled example), transform it, write it; report each error."""
    targets = _output_targets(args.inputs, args.output)
    status = EXIT_OK
    for i, target in enumerate(targets):
        inp = None
        try:
            inp = _read_input(args.inputs[i]) if args.inputs else _bundled_example()
            with _gc_paused():
                module = _load(inp, args)
                transform(module)
                _emit(module, target, args.generic)
                # Freed here by reference counting, not later by a GC pass over every op.
                module.release()
                del module
        except ShardwiseError as e:
            _report(e, inp.text if inp is not None else None)
            status = EXIT_ERROR
        except (KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as e:  # noqa: BLE001 - a bug: report it for this input, go on
            _internal_error(e, args.debug, inp.name if inp is not None else None, pass_name)
            status = EXIT_ERROR
    return status


def _cmd_propagate(args: argparse.Namespace) -> int:
    try:
        run = passes.prepare_pass(args.pass_spec)
    except ShardwiseError as e:
        raise _UsageError(f"--pass: {e.message}") from None
    return _transform(args, run, args.pass_spec)


def _cmd_passes(_args: argparse.Namespace) -> int:
    """Every pass of the catalogue with its options (Shardy's spelling) and defaults."""
    import dataclasses

    for name in passes.pass_names():
        info = passes.get_pass(name)
        options = " ".join(
            f"{f.name.replace('_', '-')}={str(f.default).lower() if isinstance(f.default, bool) else f.default}"
            for f in dataclasses.fields(info.options_type)
            if f.default is not dataclasses.MISSING
        )
        anchor = "  (on each func.func)" if info.anchor == passes.FUNC else ""
        print(f"{name}{{{options}}}{anchor}" if options else f"{name}{anchor}")
    return EXIT_OK


def _cmd_rules(args: argparse.Namespace) -> int:
    from shardwise.rules.populate import populate_op_sharding_rules

    return _transform(
        args,
        lambda module: populate_op_sharding_rules(
            module, conservative_propagation=args.conservative
        ),
        "sdy-populate-op-sharding-rules",
    )


def _cmd_export_hlo(args: argparse.Namespace) -> int:
    import json

    from shardwise.io.mlir import write_text_file
    from shardwise.xla.hlo_module import export_module_to_hlo, hlo_sharding_summary

    summaries: list[dict[str, object]] = []

    def export(module: Module) -> None:
        summaries.append(hlo_sharding_summary(module, export_module_to_hlo(module)))

    status = _transform(args, export, "export-hlo")
    if args.json and summaries:
        data = summaries[0] if len(summaries) == 1 else summaries
        write_text_file(args.json, json.dumps(data, indent=2) + "\n")
    return status


def _cmd_partition(args: argparse.Namespace) -> int:
    """The per-device program (`shardwise.partition`), and with --json its collectives."""
    import json

    from shardwise.io.mlir import write_text_file
    from shardwise.partition import partition
    from shardwise.partition_collectives import collectives, source_ops, to_json

    listed: list[dict[str, object]] = []

    def run(module: Module) -> None:
        sources = source_ops(module)
        partition(module, fuse_collectives=args.fuse_collectives, like_shardy=args.like_shardy)
        listed.append(to_json(collectives(module, sources)))

    status = _transform(args, run, "shardwise-partition")
    if args.json and listed:
        data = listed[0] if len(listed) == 1 else listed
        write_text_file(args.json, json.dumps(data, indent=2) + "\n")
    return status


def _cmd_import_hlo(args: argparse.Namespace) -> int:
    from shardwise.syntax import parse_mesh
    from shardwise.xla.hlo_module import import_module_from_hlo

    try:
        text = args.mesh.strip()
        mesh = parse_mesh(text if text.startswith("#") else "#sdy.mesh" + text)
    except ShardwiseError as e:
        raise _UsageError(f'--mesh: {e.message} (expected e.g. \'<["x"=2, "y"=4]>\')') from None
    return _transform(
        args, lambda module: import_module_from_hlo(module, mesh, args.mesh_name), "import-hlo"
    )


# -- parser and main ---------------------------------------------------------------------------


def _add_transform_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="IN.mlir",
        help="input files ('-' = stdin); none: the bundled example " + EXAMPLE,
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file, or directory for several inputs (default: stdout)",
    )
    p.add_argument("--generic", action="store_true", help="print MLIR's generic op form")
    _add_input_args(p)


_VERBOSE_HELP = "also print warnings Shardy only logs (ops without a sharding rule, once each)"


def _add_input_args(p: argparse.ArgumentParser) -> None:
    # SUPPRESS: given before the command (`shardwise --verbose propagate`) it stays set.
    p.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help=_VERBOSE_HELP)
    p.add_argument(
        "--allow-unregistered-dialect",
        action="store_true",
        help='accept ops of unknown dialects ("foo.bar"), as ops without a sharding rule',
    )


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = (os.get_terminal_size(stdout.fileno()).columns if stdout else 0) or 80
        except (AttributeError, ValueError, OSError):  # closed, detached, not a terminal
            columns = 80
    return columns


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter with the width it would choose, found without `shutil`: argparse
    imports `shutil` (and with it `bz2`, `lzma`, `zlib`) for the width of every parser it
    checks an argument of, ~3 ms of every command's start-up."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` formatting with `_HelpFormatter` (so do its subparsers:
    `add_subparsers` makes them of the parser's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


_BUILTIN_HELP = {
    "verify": "check that MLIR files parse and verify",
    "propagate": "propagate shardings and print the module",
    "passes": "list every pass --pass takes, with its options",
    "rules": "attach every op's sharding rule (sdy.sharding_rule)",
    "export-hlo": "add XLA's mhlo.sharding text beside every sdy sharding",
    "import-hlo": "turn mhlo.sharding strings into sdy shardings on a mesh",
    "partition": "the per-device program: local shapes and collectives",
}


def _add_builtin(
    sub: Any,
    name: str,
    only: str | None,
    run: Callable[[argparse.Namespace], int],
    add_args: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """Add the command `name` of this module: in full when `only` is None or `name`, else its
    name and help only, as `_add_command` (building every command's arguments costs ~2 ms of
    a command's start-up; the command line runs one)."""
    p = sub.add_parser(name, help=_BUILTIN_HELP[name])
    if only in (None, name):
        if add_args is not None:
            add_args(p)
        p.set_defaults(run=run)


def _verify_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="IN.mlir", help="input files ('-' = stdin)")
    _add_input_args(p)


def _propagate_args(p: argparse.ArgumentParser) -> None:
    _add_transform_args(p)
    p.add_argument(
        "--pass",
        dest="pass_spec",
        default=DEFAULT_PASS,
        metavar="NAME",
        help=(
            f"Shardy pass to run, with optional {{option=value ...}}, a chain 'a,b' or a "
            "pipeline 'builtin.module(a,func.func(b))' (default "
            f"{DEFAULT_PASS}; 'none' only loads and writes; `shardwise passes` lists them)"
        ),
    )


def _rules_args(p: argparse.ArgumentParser) -> None:
    _add_transform_args(p)
    p.add_argument("--conservative", action="store_true", help="conservative rules (no sub-axes)")


def _export_hlo_args(p: argparse.ArgumentParser) -> None:
    _add_transform_args(p)
    p.add_argument("--json", metavar="OUT.json", help="also write the shardings as JSON")


def _import_hlo_args(p: argparse.ArgumentParser) -> None:
    _add_transform_args(p)
    p.add_argument("--mesh", required=True, help='the device mesh, e.g. \'<["x"=2, "y"=4]>\'')
    p.add_argument("--mesh-name", default="mesh", help="symbol of the mesh (default: mesh)")


def _partition_args(p: argparse.ArgumentParser) -> None:
    _add_transform_args(p)
    p.add_argument("--json", metavar="P.json", help="also list every collective as JSON")
    p.add_argument(
        "--fuse-collectives",
        action="store_true",
        help="canonicalize{enable-patterns=sdy-collective} first (all-reduce + slice -> "
        "reduce-scatter; the 0.10.2 global-to-local cannot lower it after a sharded dot)",
    )
    p.add_argument(
        "--like-shardy",
        action="store_true",
        help="stop where jaxlib 0.10.2's Shardy stops (an error naming the op) instead of "
        "the fallbacks of docs/partition.md",
    )


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only`, the commands other than `only` are there by
    name and help only (those of `_COMMANDS`: their modules are not imported)."""
    parser = _Parser(
        prog="shardwise",
        description="Sharding propagation for StableHLO + Shardy (sdy) MLIR, in pure Python.",
    )
    parser.add_argument("--version", action="version", version=f"shardwise {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show Python tracebacks for internal errors"
    )
    parser.add_argument("--verbose", action="store_true", help=_VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_builtin(sub, "verify", only, _cmd_verify, _verify_args)
    _add_builtin(sub, "propagate", only, _cmd_propagate, _propagate_args)
    _add_builtin(sub, "passes", only, _cmd_passes)
    _add_builtin(sub, "rules", only, _cmd_rules, _rules_args)
    _add_command(sub, "fuzz", only)
    _add_command(sub, "explain", only)
    _add_command(sub, "report", only)
    _add_command(sub, "plan", only)
    _add_builtin(sub, "export-hlo", only, _cmd_export_hlo, _export_hlo_args)
    _add_builtin(sub, "import-hlo", only, _cmd_import_hlo, _import_hlo_args)
    _add_builtin(sub, "partition", only, _cmd_partition, _partition_args)
    _add_command(sub, "check", only)
    _add_command(sub, "validate-rule", only)
    _add_command(sub, "iopddl", only)
    return parser


# Commands whose arguments their own module defines (`build_parser(p)` and `run(args)`), with
# the one-line help `shardwise --help` lists. Their modules are imported only when the command
# line names them: `shardwise propagate` does not pay for importing `explain` or `plan`.
_COMMANDS = {
    "fuzz": ("shardwise.fuzz.cli", "compare with Shardy on random modules (differential fuzzing)"),
    "explain": ("shardwise.explain.cli", "why a tensor is (not) sharded, axis by axis"),
    "report": ("shardwise.explain.report_cli", "collectives, bytes and time the sharding implies"),
    "plan": ("shardwise.plan.cli", "choose the argument shardings: fastest plan within memory"),
    "check": (
        "shardwise.check.cli",
        "run the partitioned program on simulated devices, compare",
    ),
    "validate-rule": (
        "shardwise.rules.validate_cli",
        "check a sharding rule numerically with numpy",
    ),
    "iopddl": (
        "shardwise.plan.iopddl_cli",
        "solve an IOPDDL contest problem (strategy per node)",
    ),
}


def _add_command(sub: Any, name: str, only: str | None) -> None:
    """Add command `name`: in full when `only` is None or `name`, else only its name and help
    (a command line selects one command; the others are never parsed)."""
    module_name, help_text = _COMMANDS[name]
    p = sub.add_parser(name, help=help_text)
    if only in (None, name):
        module = importlib.import_module(module_name)
        module.build_parser(p)
        p.set_defaults(run=module.run)


def _command_named(argv: Sequence[str]) -> str | None:
    """The command an argument list selects: its first word that is not an option (the
    top-level options take no values); None when there is none (``--help``)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


_BUG_HINT = "this is a bug in shardwise; please report it with the input file and the command line"


def _report(error: ShardwiseError, source: str | None) -> None:
    text = error.format(source)
    if isinstance(error, InternalError):
        text += f"\nnote: {_BUG_HINT}"
    print(text, file=sys.stderr)


def _internal_error(
    exc: BaseException, debug: bool, input_name: str | None = None, pass_name: str | None = None
) -> None:
    """``error: internal error in shardwise while running P on op N at file:line:col; ...``."""
    if debug:
        traceback.print_exc()
    op = _failing_op(exc)
    running = f" while running {pass_name}" if pass_name else ""
    if op is not None:
        where = f" on op '{op.name}' at {op.location}"
    else:
        where = f" on {input_name}" if input_name else ""
    hint = "" if debug else " (run again with --debug for the traceback)"
    print(
        f"error: internal error in shardwise{running}{where}; please report it\n"
        f"note: {type(exc).__name__}: {exc}\nnote: {_BUG_HINT}{hint}",
        file=sys.stderr,
    )


def _failing_op(exc: BaseException) -> Op | None:
    """The op the innermost frame of the traceback was working on (a local named ``op``)."""
    tb = exc.__traceback__
    found = None
    while tb is not None:
        op = tb.tb_frame.f_locals.get("op")
        if isinstance(op, Op) and op.location.line > 0:
            found = op
        tb = tb.tb_next
    return found


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """Warnings (e.g. an op unknown to the rule registry) as one line, without Python paths."""
    print(f"shardwise: warning: {message}", file=sys.stderr)


def _silence_stdout() -> None:
    """After a broken pipe (``shardwise ... | head``): drop the rest of the output quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def console_main() -> int:
    """The ``shardwise`` command (and ``python -m shardwise``): `main` on ``sys.argv``.

    Then every object is frozen out of the cyclic GC: the interpreter's exit collects every
    generation once, 0.4-0.5 s after a 20k-op model just to free memory the OS reclaims anyway
    (0.05 s frozen). In-process callers use `main`, whose heap stays collectable.
    """
    status = main()
    gc.freeze()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shardwise`` command; returns the exit status."""
    from shardwise.rules.registry import UnknownOpWarning, reset_unknown_op_warnings

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _shared_parser(_command_named(argv))
    args = parser.parse_args(argv)
    reset_unknown_op_warnings()  # once per op name per run
    with warnings.catch_warnings(), _fewer_gc_passes():
        warnings.showwarning = _show_warning
        if not args.verbose:  # Shardy only logs them; `report` lists them
            warnings.simplefilter("ignore", UnknownOpWarning)
        return _run_command(parser, args)


@functools.cache
def _shared_parser(only: str | None) -> argparse.ArgumentParser:
    """`build_parser(only)`, built once per process: building it costs ~5 ms, an eighth of a
    small model's whole run in process (`parse_args` leaves the parser as it was)."""
    return build_parser(only)


@contextlib.contextmanager
def _fewer_gc_passes():
    """Run the youngest GC generation every 100k allocations instead of every 700.

    A module is tens of thousands of long-lived objects (ops, values, shardings) with few
    cycles; the default threshold re-scans them over and over (about a quarter of the time of
    `propagate` on a 2k-op model). The previous thresholds come back afterwards.
    """
    previous = gc.get_threshold()
    gc.set_threshold(100_000, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic GC while one input is loaded, transformed and written (`ir.gc_paused`).

    The passes allocate young objects faster than they drop them, so even every 100k
    allocations a collection walks ~100k live ones (0.06-0.12 s per run of gpt_128, ~8% of
    it). Each module is released once written (`Module.release`) and so are the ops passes
    erased (`ir.releasing_erased`): reference counting frees both, and the collection when
    the GC resumes finds next to nothing to walk.
    """
    from shardwise.ir import gc_paused, releasing_erased

    with gc_paused(), releasing_erased():
        yield


def _run_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        return int(args.run(args))
    except _UsageError as e:
        parser.error(str(e))  # exits 2
    except ShardwiseError as e:
        if args.debug:
            traceback.print_exc()
        if e.location == Location():
            print(f"shardwise: {e.kind}: {e.message}", file=sys.stderr)
        else:
            _report(e, None)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - the last line of defence: no traceback for users
        _internal_error(e, args.debug)
        return EXIT_ERROR
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
