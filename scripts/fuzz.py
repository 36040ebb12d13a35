"""Fuzz the CLI: generated stack files (tests/support/generated.py) through `check`, and some through
`check`, `preview` and `render`, each verb run in-process as a user runs it (tests/support/verbs.py).

Counts what each verb ended with and reports every traceback, every verb that took over `--slow`
seconds, and every stack on which the verbs' verdicts disagree; each such stack is written as a stack
file under `--out` to replay. Exit 1 when anything was reported.

    PYTHONPATH=components python scripts/fuzz.py --check 20000 --preview 1000 --jobs 2 --seed 1

Workers take consecutive seeds from `--seed`, so a run is repeatable.
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
HANG = 60  # seconds after which a verb is interrupted (and reported: anything over --slow is)


class Hang(Exception):
    """A verb still running after HANG seconds."""


def _interrupt(signum: int, frame: Any) -> None:
    raise Hang(f"still running after {HANG} s")


def work(task: tuple[int, int, tuple[str, ...], float]) -> dict[str, Any]:
    """Run `count` stacks drawn with `seed` through `verbs`; what they ended with, and what to report."""
    seed, count, verb_names, slow = task
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "components")]
    warnings.simplefilter("ignore")
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    from support import generated, verbs

    scratch = tempfile.TemporaryDirectory(prefix="eks-devices-fuzz-")
    folder = verbs.project(Path(scratch.name))
    signal.signal(signal.SIGALRM, _interrupt)
    codes: collections.Counter[str] = collections.Counter()
    reports: list[dict[str, Any]] = []
    slowest = 0.0

    @seeded(seed)
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(config=generated.stacks())
    def one(config: dict[str, Any]) -> None:
        nonlocal slowest
        verbs.write(folder, config)
        outcomes = {}
        for verb in verb_names:
            signal.alarm(HANG)
            try:
                outcomes[verb] = verbs.run(verb, folder)
            finally:
                signal.alarm(0)
        codes[" ".join(f"{v}={o.code}" for v, o in outcomes.items())] += 1
        found = [f"{o.verb}: traceback\n{o.crash}" for o in outcomes.values() if o.crash]
        found += [f"{o.verb}: {o.seconds:.1f} s" for o in outcomes.values() if o.seconds > slow]
        slowest = max([slowest, *(o.seconds for o in outcomes.values())])
        if len(outcomes) > 1 and (disagree := verbs.mismatch(outcomes, config)) is not None:
            found.append(disagree)
        if found:
            reports.append({"findings": found, "config": config})

    try:
        one()
    finally:
        scratch.cleanup()
    return {"codes": dict(codes), "reports": reports, "slowest": slowest}


def tasks(total: int, seed: int, verb_names: tuple[str, ...], slow: float,
          chunk: int = 500) -> list[tuple[int, int, tuple[str, ...], float]]:
    """`total` stacks split into chunks of at most `chunk`, each with its own seed."""
    out = []
    while total > 0:
        out.append((seed + len(out), min(chunk, total), verb_names, slow))
        total -= chunk
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", type=int, default=2000, help="stacks through check alone")
    parser.add_argument("--preview", type=int, default=100, help="stacks through check, preview and render")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--slow", type=float, default=10.0, help="report a verb that takes longer (seconds)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="where reported stacks go")
    args = parser.parse_args()
    started = time.monotonic()
    plan = (tasks(args.check, args.seed * 1000, ("check",), args.slow)
            + tasks(args.preview, args.seed * 1000 + 500, ("check", "preview", "render"), args.slow, 50))
    totals: dict[str, collections.Counter[str]] = {"check": collections.Counter(), "all": collections.Counter()}
    reports: list[dict[str, Any]] = []
    slowest = 0.0
    with ProcessPoolExecutor(args.jobs) as pool:
        for task, result in zip(plan, pool.map(work, plan), strict=True):
            totals["check" if task[2] == ("check",) else "all"].update(result["codes"])
            reports += result["reports"]
            slowest = max(slowest, result["slowest"])
    for name, counts in totals.items():
        print(f"{'check alone' if name == 'check' else 'check, preview, render'}: {sum(counts.values())} stacks")
        for outcome, n in sorted(counts.items()):
            print(f"  {n:6d}  {outcome}")
    print(f"slowest verb: {slowest:.2f} s; reported stacks: {len(reports)}; "
          f"wall {time.monotonic() - started:.0f} s")
    if reports:
        args.out.mkdir(parents=True, exist_ok=True)
        for i, report in enumerate(reports):
            path = args.out / f"Pulumi.fuzz-{i}.yaml"
            path.write_text("# " + "\n# ".join(line for f in report["findings"] for line in f.splitlines()) + "\n"
                            + yaml.safe_dump({"config": report["config"]}, allow_unicode=True, sort_keys=False))
            print(f"{path}: {report['findings'][0].splitlines()[0]}")
    sys.exit(1 if reports else 0)


if __name__ == "__main__":
    main()
