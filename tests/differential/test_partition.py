"""`shardwise partition` against the reference's chain (jaxlib 0.10.2's Shardy).

Every corpus model of `tests/models/data` and the hand programs of `partition_programs` go
through `shardwise.partition.partition` and through the reference running the same chain
(`reference_chain`). Where the reference partitions the module, the printed texts must be
equal; where it rejects the module or aborts, ours must raise a `ShardwiseError` at the
op's file:line:col. The reference runs in one persistent worker (an abort costs a fork).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardwise import cli
from shardwise.errors import ShardwiseError
from shardwise.fuzz.worker import ReferenceWorker
from shardwise.io.mlir import load_text, write_text
from shardwise.partition import partition, reference_chain
from shardwise.passes import run_pass
from tests.differential.partition_programs import (
    CORPUS_PARTITIONED,
    DOT_RESHARDED,
    HAND,
    MATMUL_TP,
)

_DATA = Path(__file__).parent.parent / "models" / "data"
MODELS = sorted(p.name for p in _DATA.glob("*.mlir"))

PARTITIONED = set(CORPUS_PARTITIONED)
# Hand programs whose sharding does not divide a dim: the reference aborts without padding.
NEEDS_PADDING = {"pad_elementwise", "pad_dot"}
# Programs the reference partitions into a wrong program (tests/check/test_partition_check.py
# runs them): ours stops with an error naming the op instead.
REFERENCE_WRONG = {
    "pad_dot": "'stablehlo.pad' pads dimension 1, which is sharded on \"x\":\\(1\\)2",
    "elementwise_chain": "'sdy.collective_permute' from .* moves tiles of the sub-axis",
    "permute_sub_axes": "'sdy.collective_permute' from .* moves tiles of the sub-axis \"b\"",
}

# Where the reference stops, the default mode partitions further (`ConversionOptions.
# beyond_reference`, the fallback reshards): every corpus model and hand program gives a
# program there; tests/check/test_partition_beyond_{calls,ops}.py show them EQUAL.


@pytest.fixture(scope="module")
def worker() -> Iterator[ReferenceWorker]:
    with ReferenceWorker(timeout=300) as w:
        yield w


def _reference(worker: ReferenceWorker, text: str, fuse: bool) -> dict[bool, tuple[bool, str]]:
    """pad -> (ok, text or error) of the reference's chain without and with padding."""
    chains = [",".join(reference_chain(fuse, pad)) for pad in (False, True)]
    outcome = worker.run(text, chains)
    assert outcome.parsed, outcome.error
    outputs = outcome.outputs if len(outcome.outputs) == 2 else ((False, ""), (False, ""))
    return {False: outputs[0], True: outputs[1]}


def _ours(text: str, name: str, fuse: bool = False, like_shardy: bool = True) -> str:
    module = load_text(text, name)
    partition(module, fuse_collectives=fuse, like_shardy=like_shardy)
    return write_text(module)


def _compare(worker: ReferenceWorker, text: str, name: str, fuse: bool) -> bool:
    """Ours equals the reference where it partitions; else ours raises at a location."""
    ref = _reference(worker, text, fuse)
    ok, expected = ref[True]
    if name in REFERENCE_WRONG:
        assert ok
        with pytest.raises(ShardwiseError, match=REFERENCE_WRONG[name]):
            _ours(text, name, fuse)
        return True
    if not ok:
        with pytest.raises(ShardwiseError) as raised:
            _ours(text, name, fuse)
        assert raised.value.location.file == name and raised.value.location.line > 0
        assert any("while partitioning, in sdy-" in n for n in raised.value.notes)
        assert "func.func" in _ours(text, name, fuse, like_shardy=False)
        return False
    assert _ours(text, name, fuse) == expected
    # Going further than Shardy changes nothing where Shardy partitions.
    assert _ours(text, name, fuse, like_shardy=False) == expected
    # Padding is a no-op where every sharding divides: the chain without it agrees.
    plain_ok, plain = ref[False]
    assert plain_ok == (name not in NEEDS_PADDING)
    if plain_ok:
        assert plain == expected
    return True


@pytest.mark.parametrize("name", MODELS)
def test_corpus_model_matches_reference(worker: ReferenceWorker, name: str) -> None:
    partitioned = _compare(worker, (_DATA / name).read_text(), name, fuse=False)
    assert partitioned == (name in PARTITIONED)


@pytest.mark.parametrize("name", list(HAND))
def test_hand_program_matches_reference(worker: ReferenceWorker, name: str) -> None:
    text, fuse = HAND[name]
    assert _compare(worker, text, name, fuse)


def test_fused_all_reduce_of_a_dot_is_an_error_as_the_reference_aborts(
    worker: ReferenceWorker,
) -> None:
    assert not _reference(worker, DOT_RESHARDED, fuse=True)[True][0]
    with pytest.raises(ShardwiseError, match="sdy.all_reduce") as raised:
        _ours(DOT_RESHARDED, "dot.mlir", fuse=True)
    assert raised.value.location.line == 5  # the dot_general
    assert _ours(DOT_RESHARDED, "dot.mlir", fuse=False)  # the default chain lowers it


def test_fused_reduce_scatter_is_one_collective() -> None:
    text, _ = HAND["reduce_scatter_fused"]
    fused, plain = _ours(text, "r.mlir", fuse=True), _ours(text, "r.mlir")
    assert "stablehlo.reduce_scatter" in fused and "stablehlo.all_reduce" not in fused
    assert "stablehlo.all_reduce" in plain and "stablehlo.reduce_scatter" not in plain


def test_the_pass_by_name_is_the_function() -> None:
    text, _ = HAND["reduce_scatter_fused"]
    module = load_text(text, "r.mlir")
    run_pass(module, "shardwise-partition{fuse-collectives=true}")
    assert write_text(module) == _ours(text, "r.mlir", fuse=True)


# -- the command line ----------------------------------------------------------------------


def _groups_in(text: str) -> list[tuple[str, list[list[int]]]]:
    """(kind, replica groups) of each collective with replica_groups, in the text's order."""
    found = []
    for line in text.splitlines():
        m = re.search(
            r'"?stablehlo\.(all_\w+|reduce_scatter)"?\(.*replica_groups = dense<(.*?)>', line
        )
        if m:
            found.append((m.group(1), json.loads(m.group(2))))
    return found


def test_cli_writes_the_program_and_the_collectives(worker: ReferenceWorker, tmp_path) -> None:
    src = tmp_path / "mlp.mlir"
    src.write_text(MATMUL_TP)
    out, js = tmp_path / "out.mlir", tmp_path / "p.json"
    assert cli.main(["partition", str(src), "-o", str(out), "--json", str(js)]) == 0
    expected = _reference(worker, MATMUL_TP, fuse=False)[False][1]
    assert out.read_text() == expected
    listed = json.loads(js.read_text())["collectives"]
    assert [(c["kind"], c["replica_groups"]) for c in listed] == _groups_in(expected)
    (reduce,) = listed
    dot_line = 1 + next(i for i, line in enumerate(MATMUL_TP.splitlines()) if "%2 = " in line)
    assert reduce["location"] == f"{src}:{dot_line}:8"
    assert reduce["source_op"] == "stablehlo.dot_general"
    assert reduce["replica_groups"] == [[0, 1, 2, 3], [4, 5, 6, 7]]  # "model" within "data"
    assert reduce["operand_bytes"] == reduce["result_bytes"] == 8 * 32 * 4


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("permute_whole_axes", ["collective_permute", "all_to_all"]),
        ("elementwise_layouts", ["all_to_all", "all_gather", "all_gather"]),
    ],
)
def test_cli_lists_permutes_and_all_to_alls(tmp_path, name, kinds) -> None:
    text, _ = HAND[name]
    src, js = tmp_path / "e.mlir", tmp_path / "p.json"
    src.write_text(text)
    assert cli.main(["partition", str(src), "-o", str(tmp_path / "o.mlir"), "--json", str(js)]) == 0
    local = (tmp_path / "o.mlir").read_text()
    listed = json.loads(js.read_text())["collectives"]
    assert [c["kind"] for c in listed] == kinds
    with_groups = [(c["kind"], c["replica_groups"]) for c in listed if c["replica_groups"]]
    assert with_groups == _groups_in(local)
    for permute in (c for c in listed if c["kind"] == "collective_permute"):
        pairs = re.search(r"source_target_pairs = dense<(.*?)>", local)
        assert pairs is not None and permute["source_target_pairs"] == json.loads(pairs.group(1))
    assert all(c["source_op"] and c["location"].startswith(f"{src}:") for c in listed)


def test_cli_error_names_the_op(tmp_path, capsys) -> None:
    src = tmp_path / "gpt_block.mlir"
    src.write_text((_DATA / "gpt_block.mlir").read_text())
    out = str(tmp_path / "o.mlir")
    assert cli.main(["partition", str(src), "-o", out, "--like-shardy"]) == 1
    err = capsys.readouterr().err
    assert f"{src}:35:11: error: 'stablehlo.slice' op dimension 2 is sharded" in err
    assert "in sdy-convert-global-to-local" in err
    assert not (tmp_path / "o.mlir").exists()
