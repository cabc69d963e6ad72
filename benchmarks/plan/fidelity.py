"""Fidelity of the planner's cost model: the collectives it counts are the ones Shardy inserts.

    python benchmarks/plan/gen.py                 # once
    python benchmarks/plan/fidelity.py            # every case; or name some: fidelity.py mlp moe
    python benchmarks/plan/fidelity.py --budgets 1,0.5,0.25

For each case of `gen.py`: every hand-written standard plan (`data/<case>/<plan>.mlir`) and the
planner's own plan of `input.mlir` at each budget (a fraction of data parallel's peak; 1 is
unlimited; a budget nothing fits is skipped). For each module, the collectives of
`shardwise.plan.cost.estimate` (our passes) are compared, kind and axes in module order, with
those of jaxlib's Shardy running `sdy-propagation-pipeline`,
`sdy-insert-explicit-reshards{enable-full-version=true}` and `sdy-reshard-to-collectives` on
the same text. Each line: the module, the collectives counted, and `same` or the first
difference. Exit status 1 if any differs. A benchmark-sized check of issue 22's fidelity
target (`tests/plan/` checks the same on small models).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))
DATA = Path(__file__).resolve().parent / "data"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="case names (default: every generated case)")
    parser.add_argument("--budgets", default="1", help="fractions of dp's peak (1: unlimited)")
    args = parser.parse_args(argv)

    from tests.plan.test_plan import _reference_collectives

    from shardwise.plan.cost import estimate
    from shardwise.plan.search import InfeasibleBudgetError, plan_module

    cases = args.cases or sorted(p.name for p in DATA.iterdir() if (p / "input.mlir").exists())
    budgets = [float(b) for b in args.budgets.split(",") if b]
    bad = 0
    for case in cases:
        folder = DATA / case
        mesh = (folder / "mesh.txt").read_text().strip()
        modules = [(p.stem, p.read_text()) for p in sorted(folder.glob("*.mlir"))]
        modules = [(n, t) for n, t in modules if n != "input"]
        dp_peak = estimate(dict(modules)["dp"])["peak_memory_bytes_per_device"]
        source = (folder / "input.mlir").read_text()
        for b in budgets:
            memory = None if b >= 1 else int(b * dp_peak)
            try:
                plan = plan_module(source, mesh, memory=memory)
            except InfeasibleBudgetError:
                print(f"{case}/plan@{b:g}: no plan fits, skipped", flush=True)
                continue
            modules.append((f"plan@{b:g} ({plan.name})", plan.text))
        for label, text in modules:
            ours = [(c["kind"], tuple(c["axes"])) for c in estimate(text)["collectives"]]
            theirs = _reference_collectives(text)
            if ours == theirs:
                verdict = "same"
            else:
                bad += 1
                i = next(
                    (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
                    min(len(ours), len(theirs)),
                )
                mine = ours[i] if i < len(ours) else None
                ref = theirs[i] if i < len(theirs) else None
                verdict = f"DIFFERS at #{i}: ours {mine}, Shardy's {ref}"
            print(
                f"{case}/{label}: {len(ours)} collectives (Shardy {len(theirs)}), {verdict}",
                flush=True,
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
