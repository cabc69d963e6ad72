"""Robustness fuzzing: mutated real modules never crash, hang or leak a traceback.

Each case takes a module of the corpus (tests/models/data and the bundled example), applies
one seeded mutation (delete characters, swap two tokens, duplicate a line, replace a sharding,
change a number) and runs every command in-process: ``verify``, ``propagate`` with each of
the four propagation passes and the default pipeline, and ``rules``. Each must exit 0 or 1
within a time limit, and print no traceback and no internal error (an internal error is a
shardwise bug to investigate, whatever the input).

The default campaign is small (CI budget); ``SHARDWISE_ROBUSTNESS_CASES=2000 pytest
tests/property/test_robustness_fuzz.py`` runs a bigger one by hand (``SHARDWISE_ROBUSTNESS_SEED``
picks another seed).
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import signal
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import pytest

from shardwise import cli

DATA = Path(__file__).resolve().parents[1] / "models" / "data"
NUM_CASES = int(os.environ.get("SHARDWISE_ROBUSTNESS_CASES", "36"))
SEED = int(os.environ.get("SHARDWISE_ROBUSTNESS_SEED", "20261129"))
TIME_LIMIT_S = 60  # per command; generous: CI machines are shared
MAX_CORPUS_CHARS = 8000  # the default campaign uses the smaller models (fast commands)

COMMANDS: tuple[tuple[str, ...], ...] = (
    ("verify",),
    ("propagate", "--pass", "sdy-basic-propagate"),
    ("propagate", "--pass", "sdy-aggressive-propagate"),
    ("propagate", "--pass", "sdy-op-priority-propagate"),
    ("propagate", "--pass", "sdy-user-priority-propagate"),
    ("propagate",),
    ("rules",),
)


def _corpus() -> dict[str, str]:
    texts = {p.stem: p.read_text() for p in sorted(DATA.glob("*.mlir"))}
    example = resources.files("shardwise.examples").joinpath(cli.EXAMPLE).read_text()
    texts["bundled_example"] = example
    if "SHARDWISE_ROBUSTNESS_CASES" not in os.environ:
        texts = {k: v for k, v in texts.items() if len(v) <= MAX_CORPUS_CHARS}
    return texts


# -- mutations (each: text, rng -> text) -------------------------------------------------------

_TOKEN_RE = re.compile(r"\S+")
_NUMBER_RE = re.compile(r"\d+")
_DIMS_RE = re.compile(r"(#sdy\.sharding<@?\w+, |<@\w+, )(\[[^\]]*\])")
_AXIS_RE = re.compile(r'"(\w+)"=(\d+)')
_NUMBERS = (0, 1, 2, 3, 4, 7, 8, 16, 64, 2**31, 2**32, 2**63, 10**25)


def delete_chars(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text))
        text = text[:i] + text[i + 1 :]
    return text


def swap_tokens(text: str, rng: random.Random) -> str:
    tokens = list(_TOKEN_RE.finditer(text))
    a, b = sorted(rng.sample(tokens, 2), key=lambda m: m.start())
    return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    return "".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :])


def _random_dims(rank: int, axes: list[tuple[str, int]], rng: random.Random) -> str:
    names = [name for name, _ in axes] + ["zz"]
    dims = []
    for _ in range(rank):
        picked = rng.sample(names, rng.randint(0, min(2, len(names))))
        refs = []
        for name in picked:
            size = dict(axes).get(name, 2)
            if size >= 4 and rng.random() < 0.3:
                refs.append(f'"{name}":(1)2')
            else:
                refs.append(f'"{name}"')
        open_mark = ", ?" if refs and rng.random() < 0.3 else ("?" if rng.random() < 0.2 else "")
        prio = f"p{rng.randint(0, 3)}" if rng.random() < 0.3 else ""
        dims.append("{" + ", ".join(refs) + open_mark + "}" + prio)
    return "[" + ", ".join(dims) + "]"


def replace_sharding(text: str, rng: random.Random) -> str:
    matches = list(_DIMS_RE.finditer(text))
    if not matches:
        return change_number(text, rng)
    m = rng.choice(matches)
    rank = m.group(2).count("{")
    if rng.random() < 0.2:
        rank += rng.choice((-1, 1))
    axes = [(name, int(size)) for name, size in _AXIS_RE.findall(text)]
    new = _random_dims(max(rank, 0), axes, rng)
    return text[: m.start(2)] + new + text[m.end(2) :]


def replace_sharding_validly(text: str, rng: random.Random) -> str:
    """A sharding that still verifies: same rank, distinct full axes of its own mesh."""
    matches = list(_DIMS_RE.finditer(text))
    if not matches:
        return duplicate_line(text, rng)
    m = rng.choice(matches)
    mesh = re.search(r"@(\w+)", m.group(1))
    decl = re.search(rf"sdy\.mesh @{mesh.group(1) if mesh else ''} = <\[([^\]]*)\]", text)
    names = [name for name, _ in _AXIS_RE.findall(decl.group(1))] if decl else []
    rng.shuffle(names)
    dims = []
    for _ in range(m.group(2).count("{")):
        axes = [f'"{names.pop()}"' for _ in range(rng.randint(0, min(1, len(names))))]
        is_open = rng.random() < 0.4
        items = ", ".join(axes + (["?"] if is_open else []))
        dims.append("{" + items + "}" + (f"p{rng.randint(0, 2)}" if rng.random() < 0.3 else ""))
    return text[: m.start(2)] + "[" + ", ".join(dims) + "]" + text[m.end(2) :]


def change_number(text: str, rng: random.Random) -> str:
    m = rng.choice(list(_NUMBER_RE.finditer(text)))
    return text[: m.start()] + str(rng.choice(_NUMBERS)) + text[m.end() :]


MUTATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "delete": delete_chars,
    "swap": swap_tokens,
    "duplicate": duplicate_line,
    "sharding": replace_sharding,
    "valid-sharding": replace_sharding_validly,  # twice the weight: loadable modules
    "valid-sharding2": replace_sharding_validly,
    "number": change_number,
}


def _cases() -> Iterator[tuple[str, str, int]]:
    corpus = sorted(_corpus())
    rng = random.Random(SEED)
    for i in range(NUM_CASES):
        yield corpus[i % len(corpus)], rng.choice(sorted(MUTATIONS)), rng.randrange(2**32)


CASES = list(_cases())


# -- running -----------------------------------------------------------------------------------


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def fire(signum: int, frame: object) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_command(argv: list[str], limit: int = TIME_LIMIT_S) -> tuple[int, str]:
    """Exit code and stderr of `shardwise argv` in this process; -1 on a hang."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            with _time_limit(limit):
                code = cli.main(argv)
        except SystemExit as e:
            code = int(e.code or 0)
        except _Timeout:
            code = -1
    return code, err.getvalue()


def check_robust(path: Path) -> list[str]:
    """Every command on `path`; the problems found (empty: all fine)."""
    problems = []
    for command in COMMANDS:
        code, err = run_command([*command, str(path)])
        if code == -1:
            problems.append(f"{' '.join(command)}: no answer within {TIME_LIMIT_S} s")
        elif code not in (0, 1) or "Traceback" in err or "internal error" in err:
            problems.append(f"{' '.join(command)}: exit {code}: {err[:2000]}")
        if command == ("verify",) and code == 1:
            # Not loadable: the other commands stop at the same load error; try one.
            code, err = run_command(["propagate", str(path)])
            if code != 1 or "Traceback" in err or "internal error" in err:
                problems.append(f"propagate after a load error: exit {code}: {err[:2000]}")
            break
    return problems


@pytest.mark.parametrize(
    ("model", "mutation", "seed"), CASES, ids=[f"{m}-{k}-{s}" for m, k, s in CASES]
)
def test_mutated_module_is_handled(model: str, mutation: str, seed: int, tmp_path: Path) -> None:
    text = _corpus()[model]
    mutant = MUTATIONS[mutation](text, random.Random(seed))
    path = tmp_path / f"{model}.mlir"
    path.write_text(mutant)
    problems = check_robust(path)
    assert not problems, "\n".join(problems)


def test_mutations_change_the_text() -> None:
    text = _corpus()["shard_alike"]
    for name, mutate in MUTATIONS.items():
        assert any(mutate(text, random.Random(s)) != text for s in range(5)), name


def test_a_hang_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def spin(argv: object) -> int:
        while True:
            pass

    monkeypatch.setattr(cli, "main", spin)
    assert run_command(["verify", "x.mlir"], limit=1) == (-1, "")
