"""Write GPT stacks of several depths, lowered from JAX, to `benchmarks/data/gpt_<depth>.mlir`.

    python benchmarks/gen_gpt.py                 # depths 2 4 8 16 32 64 128
    python benchmarks/gen_gpt.py 16 64 128

The model is `tools/make_models.py`'s GPT stack (embedding, `depth` tensor-parallel pre-LN
layers on a (2, 4) "data"/"model" mesh, LM head), forward only, before propagation.
`--debug-info` writes `gpt_<depth>_debug.mlir`, printed with `as_text(debug_info=True)`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "benchmarks" / "data"
DEFAULT_DEPTHS = (2, 4, 8, 16, 32, 64, 128)

sys.path.insert(0, str(ROOT / "tools"))
import make_models as mm  # noqa: E402
from make_models import count_ops, gpt_stack_text  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("depths", nargs="*", type=int, default=list(DEFAULT_DEPTHS))
    parser.add_argument("--debug-info", action="store_true", help="as_text(debug_info=True)")
    args = parser.parse_args(argv)
    mm.DEBUG_INFO = args.debug_info
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for depth in args.depths:
        text = gpt_stack_text(depth)
        path = DATA_DIR / f"gpt_{depth}{'_debug' if args.debug_info else ''}.mlir"
        path.write_text(text)
        kb = len(text.encode()) / 1024
        print(f"{path.relative_to(ROOT)}: {count_ops(text)} ops, {kb:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
