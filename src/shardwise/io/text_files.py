"""Text files in and out, every failure an `InputError` naming the file: reading (UTF-8 only;
bytecode, binary and non-UTF-8 files refused with what to do instead) and writing atomically (a
temporary file renamed over the target). No jaxlib: `shardwise.io.mlir` re-exports these.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from pathlib import Path

from shardwise.errors import InputError, Location

__all__ = ["read_text_file", "decode_text", "write_text_file"]

_BYTECODE_MAGIC = b"ML\xefR"


def read_text_file(path: str | os.PathLike[str]) -> str:
    """Read a UTF-8 text file, turning every OS/encoding failure into an `InputError`."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file; check the path", Location(name)) from None
    except IsADirectoryError:
        raise InputError("is a directory; expected an .mlir file", Location(name)) from None
    except PermissionError:
        raise InputError("permission denied reading the file", Location(name)) from None
    except OSError as e:
        raise InputError(f"cannot read the file: {e.strerror}", Location(name)) from None
    return decode_text(data, name)


def decode_text(data: bytes, name: str) -> str:
    """Bytes of an input named `name` -> text; bytecode, binary or non-UTF-8 -> `InputError`."""
    if data.startswith(_BYTECODE_MAGIC):
        raise InputError(
            "MLIR bytecode; shardwise reads MLIR text: convert it first, e.g. "
            "`mlir-opt IN.mlirbc -o OUT.mlir` or `str(module)` with the MLIR Python bindings",
            Location(name, 1, 1),
        )
    if b"\0" in data:
        raise InputError(
            "binary file (contains NUL bytes); expected MLIR text such as the output of "
            "`jax.jit(f).lower(...).as_text()`",
            _byte_location(data, data.index(b"\0"), name),
        )
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]  # invisible in editors: columns count without it
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            f"not UTF-8 text (byte 0x{data[e.start]:02x}); save the file as UTF-8",
            _byte_location(data, e.start, name),
        ) from None


def _byte_location(data: bytes, offset: int, name: str) -> Location:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return Location(name, line, col)


def write_text_file(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` into `path` atomically (temp file + rename); failures raise `InputError`
    naming the path, so no command reports a full disk or a missing directory as a bug."""
    target = Path(path)
    name = str(path)
    if target.is_dir():
        raise InputError("is a directory; give a file name for the output", Location(name))
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = _make_temporary(directory, f".{target.name}.", ".tmp")
    except FileNotFoundError:
        raise InputError(
            f"cannot write: directory '{directory}' does not exist", Location(name)
        ) from None
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", Location(name)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, _file_mode(target))
        os.replace(tmp, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(f"cannot write: {e.strerror}", Location(name)) from None
    except BaseException:  # Ctrl-C or a bug mid-write: no temporary file is left behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _make_temporary(directory: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file ``prefix<random>suffix`` in `directory`, readable by its owner only, open
    for writing: what `tempfile.mkstemp` does, without importing `tempfile` (and `shutil`,
    `random`, `bz2`, `lzma` with it: ~3 ms of every command's start-up)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name in '{directory}'")


def _file_mode(target: Path) -> int:
    """The mode the output should get: the old file's, else what ``open()`` would give.

    (`_make_temporary` creates files readable by their owner only, as `tempfile.mkstemp`.)
    """
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
