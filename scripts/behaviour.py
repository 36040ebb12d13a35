"""Fingerprint what the toolkit does with many stacks, to show a restructure changed no behaviour.

For the shipped stacks and every stack the test suite builds (recorded by running the
suite with `EKS_DEVICES_RECORD_STACKS=<folder>`, see `tests/support/stacks.py`), it writes one line per stack:
the stack, then a hash of what `preview --json` reports (the plan, its findings, the resource tree and counts)
or of the configuration problems it is refused with. The pulumi-eks contract is left out: it guards the
program, not the stack, and is checked by the suite (tests/offline/test_eks_contract.py).

    python scripts/behaviour.py --recorded FOLDER > after.txt     # on each commit, then: diff before.txt after.txt

Run it with the checkout's package first on the path (`PYTHONPATH=components`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def stacks(recorded: Path | None) -> list[tuple[str, dict[str, Any]]]:
    """(name, `config:` mapping) of every stack to fingerprint."""
    from eks_devices.core.config import stack_file

    out = [(f"stacks/{f.name}", stack_file.read_config(f)) for f in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))]
    if recorded is not None:
        out += [(f"recorded/{f.name}", json.loads(f.read_text())) for f in sorted(recorded.glob("*.json"))]
    return out


def fingerprint(item: tuple[str, dict[str, Any]]) -> str:
    """One line: the stack's name and the hash of what preview reports for it."""
    from eks_devices.cli.report import plan_data
    from eks_devices.core import planner
    from eks_devices.core.config.stack import ConfigError, parse

    name, config = item
    try:
        plan = planner.build(parse(config))
    except ConfigError as exc:
        data: dict[str, Any] = {"problems": [[p.path, p.given, p.accepted] for p in exc.problems]}
    else:
        data = plan_data(plan)
        if not plan.spec.cluster.existing:
            from eks_devices.offline.preview import resources_data, run_program

            try:
                run = run_program(ROOT, "fingerprint", config, plan)
            except Exception as exc:
                data["programFailed"] = str(exc).strip().splitlines()[-1:]
            else:
                data["resources"] = resources_data(run.recording)
                data["resourceCounts"] = run.recording.counts()
    text = json.dumps(data, sort_keys=True, default=str)
    return f"{name} {hashlib.sha256(text.encode()).hexdigest()[:20]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recorded", type=Path, help="a folder of stacks the suite recorded")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with ProcessPoolExecutor(args.jobs) as pool:
        for line in pool.map(fingerprint, stacks(args.recorded), chunksize=8):
            sys.stdout.write(line + "\n")


if __name__ == "__main__":
    main()
