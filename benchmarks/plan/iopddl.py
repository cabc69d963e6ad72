"""Run shardwise's IOPDDL solver on every problem of a folder, beside the contest's best scores.

    # the public instances, downloaded by you (not part of this repository):
    #   git clone https://github.com/google/iopddl && gzip -d iopddl/benchmarks/*
    python benchmarks/plan/iopddl.py iopddl/benchmarks
    python benchmarks/plan/iopddl.py iopddl/benchmarks --time-limit 10 --only B,G

Each problem runs with its contest timeout (by its name `asplos-2025-iopddl-X`; 60 s for
any other file) unless `--time-limit` is given, in a fresh process (`shardwise iopddl`), so
one problem's memory never carries over to the next. The cost is re-checked by the exact
evaluator (`shardwise.plan.iopddl.evaluate`).

Reference numbers:
- `best team`: the lowest cost any of the 20 teams reached in the final evaluation,
  `misc/iopddl_final_results.csv` of github.com/asplos-contest/2025 (commit 286e3dd).
  Costs of about 1e18 and above there are the contest's penalties (no valid solution).
- timeouts: the benchmark table of github.com/google/iopddl (`iopddl-benchmark-details.png`)
  and github.com/asplos-contest/2025 `IOPDDL.md`.
- `xla`: the score of XLA's own auto-sharding solver, published for 10 of the 25 problems (A,
  B, C, E, F, G, H, I, P, Q; empty where XLA found no valid solution) in the row `XLA` of
  `iopddl_final_results.csv` in github.com/ti2-group/iopddl_experiments (commit 3a300c7), the
  supplement of "Soft Constraints, Strong Solutions: Optimizing Intra-Operator Parallelism for
  Distributed Deep Learning", which gives it as the contest organizers' data. The organizers'
  own copy of the file (asplos-contest/2025) has the teams' rows only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Contest timeouts in seconds, by benchmark letter.
TIMEOUT_S = dict.fromkeys("ABCDE", 60) | dict.fromkeys("FGHIJ", 120)
TIMEOUT_S |= dict.fromkeys("KLMNO", 180) | dict.fromkeys("PQRST", 240)
TIMEOUT_S |= dict.fromkeys("UVWXY", 300)

# The lowest final cost over the 20 teams (asplos-contest/2025, misc/iopddl_final_results.csv).
BEST_TEAM = {
    "A": 6548641531, "B": 532843, "C": 84102445260, "D": 313613524736,
    "E": 338965335230, "F": 364364563561, "G": 217039, "H": 527715404257,
    "I": 583706456444, "J": 1360981630371, "K": 2274276676, "L": 1970993742,
    "M": 49928460991, "N": 202739586553, "O": 222880199765, "P": 662197407330,
    "Q": 526776842042, "R": 371899551572, "S": 1534613444, "T": 682895254913,
    "U": 2569342178, "V": 1632051, "W": 11818845467155, "X": 280461191177,
    "Y": 621176568278,
}  # fmt: skip


# XLA's auto-sharding (the row `XLA` of ti2-group/iopddl_experiments' iopddl_final_results.csv).
XLA = {
    "A": 13214846074, "B": 990205, "C": 4195881092919, "E": 6638829816582,
    "F": 2788507105840, "G": 1264777, "H": 7746779635221, "I": 6552890513792,
    "P": 651833115436, "Q": 1995944800323,
}  # fmt: skip


# The contest's cost of a forbidden entry (every one in instance K is exactly this, and the
# valid costs stay below 1e13), so cost // PENALTY counts the forbidden entries taken.
PENALTY = 10**18


def _letter(path: Path) -> str | None:
    stem = path.name.split(".")[0]
    if stem.startswith("asplos-2025-iopddl-") and len(stem) == len("asplos-2025-iopddl-X"):
        return stem[-1]
    return None


def run_one(path: Path, time_limit: float | None) -> dict:
    letter = _letter(path)
    limit = time_limit or TIMEOUT_S.get(letter or "", 60)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "solution.json"
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "shardwise", "iopddl", str(path), "--time-limit", str(limit)]
            + ["-o", str(out)],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        if done.returncode != 0:
            return {
                "name": path.name,
                "error": done.stderr.strip().splitlines()[-1],
                "limit": limit,
            }
        result = json.loads(out.read_text())
    result.update(name=path.name, limit=limit, wall_s=wall, best_team=BEST_TEAM.get(letter or ""))
    result.update(xla=XLA.get(letter or ""))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder of IOPDDL problems (*.json)")
    parser.add_argument("--time-limit", type=float, help="seconds per problem (default: contest's)")
    parser.add_argument("--only", help="benchmark letters to run, e.g. B,G")
    parser.add_argument("--json", metavar="OUT", help="also write every result as JSON")
    args = parser.parse_args(argv)
    paths = sorted(args.folder.glob("*.json"))
    if args.only:
        wanted = set(args.only.upper().split(","))
        paths = [p for p in paths if _letter(p) in wanted]
    if not paths:
        sys.exit(f"no *.json problems in {args.folder}")
    print(f"{'problem':<28} {'limit':>6} {'wall s':>7} {'cost':>22} {'penalties':>9} "
          f"{'status':>9} {'best team':>16} {'ratio':>8} {'xla':>16} {'vs xla':>7}")  # fmt: skip
    results = []
    for path in paths:
        r = run_one(path, args.time_limit)
        results.append(r)
        if "error" in r:
            print(f"{path.name:<28} {r['limit']:>6.0f} {'':>7} error: {r['error']}")
            continue
        best, xla = r["best_team"], r["xla"]
        ratio = f"{r['cost'] / best:.3g}" if best else "-"
        vs_xla = f"{r['cost'] / xla:.3g}" if xla else "-"
        print(f"{path.name:<28} {r['limit']:>6.0f} {r['wall_s']:>7.1f} {r['cost']:>22} "
              f"{r['cost'] // PENALTY:>9} {r['status']:>9} {best or '-':>16} "
              f"{ratio:>8} {xla or '-':>16} {vs_xla:>7}", flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
