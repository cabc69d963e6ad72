"""MLIR text <-> our IR, through the MLIR Python bindings that ship in jaxlib.

Loading parses (and verifies) the user's text with the bindings, prints it in generic form
(with debug info if the text has its own) and reads that with our pure-Python parser
(`shardwise.io.generic`). Writing prints MLIR's pretty form in pure Python where it can
(`pretty_printer`, with or without locations), else goes the other way: our IR -> generic
text -> bindings -> MLIR's own printout; either way the output is exactly what MLIR/Shardy
prints for the same module.

Positions: every op and block argument gets `location` = where it starts in the user's file.
When the file carries its own ``loc(...)`` annotations (JAX output does), those are kept as
`Op.loc_text` and printed back, and the positions come from a second parse of the text with
every ``loc(...)`` blanked out. Either way the positions are found when first read (an error
message), by a second parse (`deferred_positions`): a run without errors needs none.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shardwise import ir
from shardwise.errors import (
    InputError,
    InternalError,
    Location,
    ParseError,
    ShardwiseError,
    VerifyError,
)
from shardwise.io import generic as gen
from shardwise.io.deferred_positions import DeferredPositions
from shardwise.io.loc_annotations import blank_locations, has_loc_annotation
from shardwise.io.text_files import decode_text, read_text_file, write_text_file

__all__ = [
    "GenericForm",
    "load_text",
    "load_file",
    "write_text",
    "write_file",
    "write_text_file",
    "blank_locations",
    "has_explicit_locations",
    "read_text_file",
    "decode_text",
]

_CURRENT_OP_NOTE = "see current operation"
_UNREGISTERED_DIALECT = "operation being parsed with an unregistered dialect"
_MARKER_RE = re.compile(r'"' + re.escape(gen.OP_MARKER) + r'(\d+)"')


def _ir() -> Any:
    """The bindings' ``ir`` module (imported on first use: ``import shardwise`` stays light)."""
    from jaxlib.mlir import ir as mlir_ir

    return mlir_ir


@functools.cache
def _context_setup() -> tuple[Any, Any]:
    """What every context gets: JAX's dialect registry and the context class.

    This is what ``jax._src.interpreters.mlir.make_ir_context`` sets up, built from jaxlib
    alone: importing ``jax`` itself costs ~2 s of every ``shardwise`` command's start-up and
    loading/writing needs none of it.
    """
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext

    mlir_ir = _ir()

    class _Context(mlir_ir.Context):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            # As JAX's context: skip the site `Context.__init__`, which loads every dialect
            # linked into the binary; only the registered ones below are wanted.
            super(mlir_ir.Context, self).__init__()

    registry = mlir_ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    return registry, _Context


@functools.cache
def _dialect_registrations() -> tuple[Callable[..., None], ...]:
    """The register functions of the dialects JAX registers, in JAX's order: sdy, mpmd, mhlo,
    chlo, stablehlo.

    Taken from the C++ extensions that ``jaxlib.mlir.dialects.<name>`` re-export them from:
    those Python modules also define a class per op (``_stablehlo_ops_gen`` and the like),
    ~30 ms of every command's start-up, and the bindings here only parse, verify and print.
    """
    try:
        from jaxlib.mlir._mlir_libs import _chlo, _mlirHlo, _sdy, _sdyMpmd, _stablehlo
    except ImportError:  # another jaxlib layout: its dialect modules
        from jaxlib.mlir.dialects import chlo, mhlo, mpmd, sdy, stablehlo

        return (
            sdy.register_dialect,
            mpmd.register_dialect,
            mhlo.register_mhlo_dialect,
            chlo.register_dialect,
            stablehlo.register_dialect,
        )
    return (
        _sdy.register_dialect,
        _sdyMpmd.register_dialect,
        _mlirHlo.register_mhlo_dialect,
        _chlo.register_dialect,
        _stablehlo.register_dialect,
    )


def _make_context() -> Any:
    """A context with the dialects JAX registers (as JAX's `make_ir_context`, single-threaded)."""
    registry, context_class = _context_setup()
    context = context_class()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    # Single-threaded (JAX hands its contexts a thread pool): when a module fails to verify,
    # a verifier thread reporting the error waits for the GIL, held by the main thread that
    # waits for the pool - a deadlock seen in fuzz runs. One thread costs nothing measurable
    # here (parse + verify of gpt_128 in 0.17-0.25 s either way).
    context.enable_multithreading(False)
    for register in _dialect_registrations():
        register(context)
    return context


def _parse(
    text: str, allow_unregistered_dialect: bool = False, metadata: bool | None = None
) -> Any:
    """Parse and verify with the bindings, in a context of `_context_for` (`metadata`: whether
    the text has a ``{-#`` block, if the caller has looked already)."""
    context = _context_for(text, metadata)
    context.allow_unregistered_dialects = allow_unregistered_dialect
    return _ir().Module.parse(text, context=context)


# A context serves this many parses, then the next parse makes a new one: making a context
# costs ~5 ms (loading the dialects), a tenth of a small model's whole run, while everything a
# context keeps (uniqued attributes and types) lives as long as it does.
_CONTEXT_USES = 8
# Per thread, as a context is single-threaded (`_make_context`): the context, and how many
# parses it has served.
_shared = threading.local()
# A forked child (the fuzzer's worker pool) makes its own instead of the parent's copy.
os.register_at_fork(after_in_child=lambda: _shared.__dict__.clear())


def _context_for(text: str, metadata: bool | None = None) -> Any:
    """The context to parse `text` in: a shared one (see `_CONTEXT_USES`), or a fresh one when
    the text has resources: a context that has seen a ``dense_resource`` blob renames it on
    every reparse (``blob`` -> ``blob_1``). `metadata`: ``"{-#" in text``, if known."""
    if "dense_resource" in text or ("{-#" in text if metadata is None else metadata):
        return _make_context()
    context, uses = getattr(_shared, "context", None), getattr(_shared, "uses", 0)
    if context is None or uses >= _CONTEXT_USES:
        context, uses = _make_context(), 0
    _shared.context, _shared.uses = context, uses + 1
    return context


# -- locations ---------------------------------------------------------------------------------


def _positions_in_file(text: str, filename: str, unregistered: bool) -> gen.Positions:
    """Op and block-argument positions of `text` in the file: those of its blanked copy."""
    blanked, _ = blank_locations(text)
    try:
        return _walk_positions(_parse(blanked, unregistered), filename)
    except _ir().MLIRError as e:
        raise InternalError(
            f"the input parses, but not once its loc(...) are blanked: {e}", Location(filename)
        ) from None


def _walk_positions(module: Any, filename: str) -> gen.Positions:
    """Op and block-argument positions of a bindings module, in MLIR pre-order."""
    ops: list[Location] = []
    args: list[Location] = []

    def visit(op: Any) -> None:
        ops.append(gen.loc_position(str(op.location), filename))
        for region in op.regions:
            for block in region.blocks:
                args.extend(gen.loc_position(str(a.location), filename) for a in block.arguments)
                for child in block.operations:
                    visit(child.operation)

    visit(module.operation)
    return gen.Positions(ops, args)


def has_explicit_locations(module: ir.Module) -> bool:
    """True if the module was read from text with ``loc(...)`` annotations (kept on write)."""
    return any(op.loc_text is not None for op in module.walk())


# -- errors ------------------------------------------------------------------------------------


def _diagnostic_error(err: Any, filename: str) -> ShardwiseError:
    """An ``ir.MLIRError`` -> ParseError / VerifyError at the first diagnostic's position.

    MLIR attaches "see current operation: ..." to verifier failures only: that note tells a
    verify error from a syntax error, and is dropped (the caret shows the op).
    """
    diags = list(getattr(err, "error_diagnostics", []) or [])
    if not diags:
        return ParseError(str(err).strip() or "MLIR rejected the input", Location(filename))
    first = diags[0]
    location = gen.loc_position(str(first.location), filename)
    verifier = False
    notes = []
    for note in first.notes:
        if note.message.startswith(_CURRENT_OP_NOTE):
            verifier = True
            continue
        notes.append(f"{gen.loc_position(str(note.location), filename)}: {note.message}")
    notes += [f"{gen.loc_position(str(d.location), filename)}: {d.message}" for d in diags[1:]]
    cls = VerifyError if verifier else ParseError
    message = first.message
    if message.startswith(_UNREGISTERED_DIALECT):
        message = (
            "op of an unregistered dialect (registered: those JAX emits, stablehlo, sdy, func, "
            "chlo, mhlo, ...); pass --allow-unregistered-dialect (shardwise.load(..., "
            "allow_unregistered_dialect=True)) to accept it as an op without a sharding rule, "
            "or lower it to StableHLO"
        )
    return cls(message, location, notes)


def _raise_parse_error(err: Any, blanked: str | None, filename: str, unregistered: bool) -> None:
    """Raise the bindings' complaint at a position in the user's file."""
    if blanked is not None:
        # Diagnostics point at the user's loc(...) annotations; the blanked copy reports
        # positions in the file instead.
        mlir_ir = _ir()
        try:
            _parse(blanked, unregistered)
        except mlir_ir.MLIRError as e2:
            err = e2
    raise _diagnostic_error(err, filename) from None


# -- load --------------------------------------------------------------------------------------


def _sdy_parser() -> gen.SdyParser | None:
    try:
        from shardwise.syntax import parse_sdy_attribute
    except ImportError:
        return None
    return parse_sdy_attribute


def load_text(
    text: str, filename: str = "-", allow_unregistered_dialect: bool = False
) -> ir.Module:
    """Parse and verify MLIR text (StableHLO + sdy) into our IR; errors name `filename`.

    `allow_unregistered_dialect` accepts ops of dialects MLIR does not know (``"foo.bar"``),
    as ``sdy_opt -allow-unregistered-dialect`` does; they have no sharding rule.
    """
    return GenericForm.of(text, filename, allow_unregistered_dialect).load()


@dataclass(frozen=True)
class GenericForm:
    """A text parsed and verified by MLIR once, kept in MLIR's generic form: `load` builds a
    fresh `ir.Module` from it (what `load_text` returns) without MLIR, for callers that load
    one text many times (the planner: one copy per candidate)."""

    text: str
    filename: str
    printed: str
    positions: DeferredPositions
    unregistered: bool
    unregistered_ops: frozenset[str]
    # Printed in local scope: no ``#loc`` alias table, no ``{-#`` block to look for.
    local_scope: bool = False

    @staticmethod
    def of(text: str, filename: str = "-", allow_unregistered_dialect: bool = False) -> GenericForm:
        if not text.strip():
            raise InputError(
                "empty input: expected an MLIR module (e.g. the output of jax.jit(f).lower(...))",
                Location(filename),
            )
        mlir_ir = _ir()
        explicit = has_loc_annotation(text)
        unregistered = allow_unregistered_dialect
        # Each look for a few characters in the whole text costs ~1 ms on a Llama's 2 MB: once.
        metadata = "{-#" in text
        try:
            module = _parse(text, unregistered, metadata)
        except mlir_ir.MLIRError as e:
            blanked = blank_locations(text)[0] if explicit else None
            _raise_parse_error(e, blanked, filename, unregistered)
        # Where each op is in the file: looked up when an error first needs one. Without
        # explicit locations, MLIR's locations are those positions: the printout leaves them
        # out (less to print and to read) and a second parse of the text finds them on demand.
        if explicit:
            positions = DeferredPositions(
                lambda: _positions_in_file(text, filename, unregistered), filename
            )
        else:
            positions = DeferredPositions(
                lambda: _walk_positions(_parse(text, unregistered), filename), filename
            )
        # Printed by MLIR into a file (`_print_generic_to_file`), in full scope: with debug info
        # the ``#loc`` alias table keeps the printout small (JAX's nested call-site locations
        # print inline at 4-6x the input's size: moe_128, 4.7 MB against 1.1 MB); without, it
        # is local scope's text plus a newline, for 6-11% fewer instructions of a whole
        # propagate than `get_asm` in local scope, unless it starts with aliases of attributes
        # (``#map = affine_map<...>``: local scope prints them inline, as our parser reads). Else
        # `get_asm`: in local scope (the parse need not look for an alias table or a block)
        # when there is no debug info and no ``{-# dialect_resources #-}`` block (local scope
        # leaves the block out); `binary`: bytes decoded here are faster than the bindings'
        # text stream. `assume_verified`: the parse has just verified the module.
        local_scope = not explicit and not metadata
        printed = _print_generic_to_file(module, explicit)
        if printed is not None and (not local_scope or printed.startswith('"builtin.module"')):
            local_scope = False
        else:
            printed = None
            if explicit:  # the file's pass may have stripped `module`'s locations: parse again
                module = _parse(text, unregistered, metadata)
        if printed is None:
            printed = module.operation.get_asm(
                binary=True,
                print_generic_op_form=True,
                enable_debug_info=explicit,
                use_local_scope=local_scope,
                assume_verified=True,
            ).decode()
        names: frozenset[str] = frozenset()
        if unregistered:
            parsed = gen.parse_generic(printed, filename, _sdy_parser(), None, local_scope)
            found = {op.name for op in parsed.walk()}
            context = module.context
            names = frozenset(n for n in found if not context.is_registered_operation(n))
        return GenericForm(text, filename, printed, positions, unregistered, names, local_scope)

    def load(self) -> ir.Module:
        result = gen.parse_generic(
            self.printed, self.filename, _sdy_parser(), self.positions, self.local_scope
        )
        result.source = self.text
        result.allow_unregistered_dialect = self.unregistered
        result.unregistered_ops = self.unregistered_ops
        result.verify_types = verify_types
        return result


# The pass the module is printed before (`_print_generic_to_file`): one that cannot fail. It
# then runs on the bindings' copy of the module, which is dropped once printed.
_PRINT_BEFORE = "builtin.module(strip-debuginfo)"
_DUMP_HEADER = "// -----// IR Dump Before "


def _print_generic_to_file(module: Any, debug_info: bool) -> str | None:
    """The module's generic form in full scope (with debug info: the ``#loc`` alias table), as
    `get_asm` prints it, printed by MLIR into a file, the IR printer of a pass manager; None where
    that fails.

    `get_asm` prints through an unbuffered stream: one call into Python for each write, and MLIR
    writes the strings of a location one character at a time (llama_debug: 190k calls, 3/4 of the
    printing's instructions). The pass manager's printer writes files through C++'s buffered
    stream: a third less CPU time for the same text. Its printer has no local scope (nor has
    `enable_ir_printing` a flag for it). Consumes `module` (the pass runs after it is printed).
    """
    from jaxlib.mlir import passmanager

    folder = _temporary_folder()
    if folder is None:
        return None
    try:
        manager = passmanager.PassManager.parse(_PRINT_BEFORE, context=module.context)
        manager.enable_verifier(False)
        manager.enable_ir_printing(
            print_before_all=True,
            print_after_all=False,
            enable_debug_info=debug_info,
            print_generic_op_form=True,
            tree_printing_dir_path=folder,
        )
        manager.run(module.operation)
        dumps = [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files]
        if len(dumps) != 1:
            return None
        with open(dumps[0], "rb") as f:
            data = f.read()
    except (OSError, _ir().MLIRError):
        return None
    finally:
        _remove_folder(folder)
    # The dump: a header line, the printout (as `get_asm` prints it), two more newlines.
    if not data.startswith(_DUMP_HEADER.encode()) or not data.endswith(b"\n\n\n"):
        return None
    return data[data.index(b"\n") + 1 : -2].decode()


def _temporary_folder() -> str | None:
    """A new folder for a printout's file, or None: in shared memory where there is one (a disk's
    file system: 0.3 ms more per load), else in the system's temporary folder (`tempfile.mkdtemp`
    without importing `tempfile`: ~6 ms of a command's start-up)."""
    for base in ("/dev/shm", os.environ.get("TMPDIR"), "/tmp", "/var/tmp"):  # noqa: S108
        if not base:
            continue
        path = os.path.join(base, f"shardwise-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except OSError:
            continue
        return path
    return None


def _remove_folder(folder: str) -> None:
    for parent, folders, files in os.walk(folder, topdown=False):
        for name in files:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(parent, name))
        for name in folders:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(parent, name))
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def load_file(path: str | os.PathLike[str], allow_unregistered_dialect: bool = False) -> ir.Module:
    """`load_text` of a file; unreadable, binary or non-UTF-8 files raise `InputError`."""
    return load_text(read_text_file(path), str(path), allow_unregistered_dialect)


# -- write -------------------------------------------------------------------------------------


# Check mode (the test suite sets it, as a campaign script may): every `write_text` that prints
# with the pure-Python pretty printer also prints through MLIR and raises `InternalError` naming
# the first line where the two differ. A flag, not an environment variable: the library takes
# no configuration from the environment.
CHECK_PRETTY = False


def write_text(module: ir.Module, generic: bool = False, debug_info: bool | None = None) -> str:
    """Print our IR exactly as MLIR prints it (pretty form unless `generic`).

    `debug_info` None: print ``loc(...)`` only if the input had explicit locations, so an
    unchanged module gives back what the reference prints for the input.

    The pretty form (with or without locations) is printed in pure Python (`pretty_printer`)
    when it knows every op of the module; otherwise, and for the generic form, MLIR prints it.
    """
    if debug_info is None:
        debug_info = has_explicit_locations(module)
    if module.types_changed:
        # Local or padded types: MLIR verifies them as it reads our text back (an op whose
        # result type no longer follows from its operands is a located `VerifyError`, as the
        # reference's pass manager reports it), never a module written invalid.
        return _write_with_mlir(module, generic, debug_info)
    if not generic:
        fast = _print_pretty(module, debug_info)
        if fast is not None:
            if CHECK_PRETTY:
                try:
                    reference = _write_with_mlir(module, generic, debug_info)
                except ShardwiseError as e:
                    raise InternalError(
                        f"the pure-Python pretty printer printed a module MLIR rejects: {e}",
                        e.location,
                    ) from None
                _check_pretty(fast, reference)
            return fast
    return _write_with_mlir(module, generic, debug_info)


def with_func_signature(printed: str, before: str | None, module: ir.Module, func: ir.Op) -> str:
    """`write_text(module)`, from `printed`, what it gave before `func`'s signature changed
    (its attributes: the arguments' shardings), and `before`, the signature then
    (`func_signature_text`): the new signature put in the old one's place, without printing
    the rest again (0.17 s at 96 GPT layers); printed anew where that is not sure to give
    the same text."""
    from shardwise.io import pretty_ops

    # Only the signature's attributes changed since `before`: what `func_signature_text`
    # checks of the module holds still.
    after = pretty_ops.func_signature(module, func) if before is not None else None
    if before is None or after is None or printed.count(before) != 1:
        return write_text(module)
    return printed.replace(before, after)


def func_signature_text(module: ir.Module, func: ir.Op) -> str | None:
    """What `write_text(module)` prints of `func` (a func of the module's body) before its
    body, or None when it would not print it in pure Python without locations."""
    from shardwise.io import pretty_ops, pretty_stablehlo  # noqa: F401  (registers its formats)
    from shardwise.io.generic_text import RESOURCES

    if module.types_changed or RESOURCES.get(module) is not None:
        return None
    if has_explicit_locations(module):
        return None
    return pretty_ops.func_signature(module, func)


def _print_pretty(module: ir.Module, debug_info: bool = False) -> str | None:
    """The pure-Python pretty printout, or None where it gives up."""
    from shardwise.io import pretty_ops, pretty_printer, pretty_stablehlo  # noqa: F401  (registers its formats)

    try:
        return pretty_printer.print_pretty(
            module, pretty_ops.OP_PRINTERS, pretty_ops.NAME_HINTS, debug_info
        )
    except pretty_printer.Unsupported:
        return None


def _check_pretty(fast: str, reference: str) -> None:
    """Raise `InternalError` at the first line where the fast printout differs from MLIR's."""
    if fast == reference:
        return
    ours = fast.split("\n")
    theirs = reference.split("\n")
    i = 0
    while i < len(ours) and i < len(theirs) and ours[i] == theirs[i]:
        i += 1
    mine = ours[i] if i < len(ours) else "<end of text>"
    mlir = theirs[i] if i < len(theirs) else "<end of text>"
    raise InternalError(
        f"the pure-Python pretty printer differs from MLIR at line {i + 1}:\n"
        f"  ours: {mine}\n  MLIR: {mlir}",
        Location(),
    )


def _write_with_mlir(module: ir.Module, generic: bool, debug_info: bool) -> str:
    """`write_text` through the bindings: our generic text, parsed and printed by MLIR."""
    # Without debug info the locations are not printed: no need to hand them to MLIR at all.
    text = gen.print_generic(module, with_locs=debug_info)
    mlir_ir = _ir()
    try:
        parsed = _parse(text, module.allow_unregistered_dialect)
    except mlir_ir.MLIRError:
        raise _write_error(module) from None
    # Verified by the parse just above: printing need not verify again (it would fall back to
    # the generic form only for an op that fails to verify).
    return parsed.operation.get_asm(
        print_generic_op_form=generic, enable_debug_info=debug_info, assume_verified=True
    )


def verify_types(module: ir.Module) -> None:
    """MLIR's verifier on `module` (every op's own checks, e.g. StableHLO's shape inference):
    a located `VerifyError` for the first op it rejects."""
    try:
        _parse(gen.print_generic(module, with_locs=False), module.allow_unregistered_dialect)
    except _ir().MLIRError:
        raise _write_error(module, "not valid MLIR") from None


def _write_error(
    module: ir.Module, what: str = "the module to write is not valid MLIR"
) -> ShardwiseError:
    """Why MLIR rejects the module we print, placed at the offending op's location."""
    markers: list[ir.Op] = []
    text = gen.print_generic(module, markers=markers)
    mlir_ir = _ir()
    try:
        _parse(text, module.allow_unregistered_dialect)
    except mlir_ir.MLIRError as e:
        err = _diagnostic_error(e, module.filename)
        diag = e.error_diagnostics[0] if e.error_diagnostics else None
        m = _MARKER_RE.search(str(diag.location)) if diag is not None else None
        if m is not None:
            op = markers[int(m.group(1))]
            err.location = op.location
            err.notes = (f"in '{op.name}'", *err.notes)
        message = f"{what}: {err.message}"
        return VerifyError(message, err.location, err.notes)
    return InternalError("MLIR rejected the module once, then accepted it", Location())


def write_file(
    module: ir.Module,
    path: str | os.PathLike[str],
    generic: bool = False,
    debug_info: bool | None = None,
) -> None:
    """`write_text` into `path` atomically (temp file + rename); failures raise `InputError`."""
    write_text_file(path, write_text(module, generic, debug_info))
