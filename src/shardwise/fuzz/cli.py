"""``shardwise fuzz``: a differential campaign against the reference from the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardwise.fuzz.runner import CampaignReport

__all__ = ["build_parser", "main", "run"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(
        prog="shardwise fuzz",
        description="Compare shardwise with Shardy on random modules; shrink and save divergences.",
    )
    parser.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    parser.add_argument("--count", type=int, default=100, help="modules to generate (default 100)")
    parser.add_argument(
        "--pass",
        dest="passes",
        action="append",
        metavar="NAME",
        help="pass to compare, e.g. 'sdy-aggressive-propagate{propagation-strategy=basic}'; "
        "a comma chains passes ('sdy-propagation-pipeline,sdy-reshard-to-collectives'); "
        "repeatable (default: the four propagation passes)",
    )
    parser.add_argument("--out", metavar="DIR", help="directory for shrunk diverging modules")
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes (default 1)")
    parser.add_argument("--no-shrink", action="store_true", help="save divergences unshrunk")
    parser.add_argument(
        "--check",
        action="store_true",
        help="partition each module with shardwise and run `shardwise check` on it instead of "
        "comparing passes with Shardy (fuzz/check_campaign.py)",
    )
    parser.add_argument(
        "--only",
        metavar="KEY",
        help="with --check: check the one module a campaign generated as KEY "
        "(seed-index-attempt, as a FAILURE line names it, e.g. 2030-127-4) and print it, "
        "shrunk if it fails",
    )
    parser.add_argument(
        "--progress", action="store_true", help="progress bar on stderr (default: on a terminal)"
    )
    return parser


def _progress(report: CampaignReport) -> None:
    matched = sum(report.matches.values())
    print(
        f"[{report.seconds:6.1f}s] modules {report.modules}, pass-matches {matched}, "
        f"divergences {len(report.divergences)}, crashes {report.crashes}, rejects {report.rejects}",
        file=sys.stderr,
        flush=True,
    )


def _bar_or_lines(args: argparse.Namespace) -> Callable[[CampaignReport], None]:
    """A progress bar when stderr is a terminal or with --progress, else one line per batch."""
    from shardwise.explain.progress import Progress

    bar = Progress("fuzz", force=getattr(args, "progress", False))
    if not bar.enabled:
        return _progress

    def draw(report: CampaignReport) -> None:
        bar.label = f"fuzz: {len(report.divergences)} divergences, {report.crashes} crashes"
        bar.update(report.modules, args.count)
        if report.modules >= args.count:
            bar.close()

    return draw


def run(args: argparse.Namespace) -> int:
    """Run the campaign `args` describe; 0 when every module matched, 1 on a divergence."""
    if args.count < 0 or args.jobs < 1:
        print("shardwise fuzz: error: --count must be >= 0 and --jobs >= 1", file=sys.stderr)
        return 2
    # Imported here: the generator and the process pool cost every `shardwise` command ~50 ms
    # of start-up otherwise.
    if getattr(args, "check", False):
        return _run_check(args)
    if getattr(args, "only", None):
        print("shardwise fuzz: error: --only needs --check", file=sys.stderr)
        return 2
    from shardwise.fuzz.runner import PASS_NAMES, run_campaign

    report = run_campaign(
        args.seed,
        args.count,
        tuple(args.passes or PASS_NAMES),
        jobs=args.jobs,
        out=args.out,
        shrink=not args.no_shrink,
        progress=_bar_or_lines(args),
    )
    print(report.summary())
    return 1 if report.divergences else 0


def _run_check(args: argparse.Namespace) -> int:
    """``--check``: 0 when no module failed (skips and cannot-run are not failures)."""
    from shardwise.fuzz.check_campaign import CheckCampaign, run_check_campaign

    def lines(report: CheckCampaign) -> None:
        print(f"[{report.seconds:6.1f}s] {report.summary().splitlines()[1].strip()}",
              file=sys.stderr, flush=True)  # fmt: skip

    if args.jobs != 1 or args.passes:
        print("shardwise fuzz: error: --check runs one process and no --pass", file=sys.stderr)
        return 2
    if args.only:
        return _run_check_key(args)
    report = run_check_campaign(
        args.seed, args.count, out=args.out, shrink=not args.no_shrink, progress=lines
    )
    print(report.summary())
    return 1 if report.failures else 0


def _run_check_key(args: argparse.Namespace) -> int:
    """``--check --only KEY``: the module of KEY, its outcome; 1 when it fails."""
    from shardwise.fuzz.check_campaign import check_key

    try:
        report, text = check_key(args.only, out=args.out, shrink=not args.no_shrink)
    except ValueError as e:
        print(f"shardwise fuzz: error: --only: {e}", file=sys.stderr)
        return 2
    print(text)
    print(report.summary())
    return 1 if report.failures else 0


def main(argv: list[str] | None = None) -> int:
    """``shardwise fuzz --seed N --count K [--pass NAME ...] [--out DIR]``."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
