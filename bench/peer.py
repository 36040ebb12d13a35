"""Side by side: `eks-devices preview <stack> --json` against a peer tool's offline artefact for the
same stack, in turns (paired runs, medians of wall and CPU from getrusage), at 10 and 200 pools (or
`--sizes`), next to the Pulumi SDK's own floor for the same resources; then the peak resident memory of
each of the three.

    .venv/bin/python bench/peer.py --peer PATH/TO/peer-cdk/run.sh [--repeat 5] [--sizes 10 200 1000]

The peer command is given as a path (it is not part of this repository); it is called as
`<peer> <stack file>`. The stacks are bench/preview.py's synthetic Karpenter stacks.

The SDK floor is a Python program with none of the toolkit in it (`replay`): it loads the SDK modules
the toolkit's program loads for the stack and registers the resources the preview listed (their types,
names, parents and inputs) as generic resources, each through a class of its own as a provider's are,
under Pulumi's own mocks. It passes no resource options and no outputs from one resource to another,
which a real program needs and pays for: peer/floor is about the most peer/ours could be for any program
built on these SDKs. The floor with the command (`floor+cli`) also imports first what `eks-devices` imports
before it runs a program (typer, pydantic and the configuration models, the planner and the rules):
peer/(floor+cli) is about the most peer/ours could be for a program run by this command.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the sibling benchmark's stacks, timer, install and module loader
from preview import ROOT, child, install, load_module, measured_peak, stack

COMMAND = "eks_devices.cli.app"  # what `eks-devices` (`eks_devices.cli.main`) imports before its verb runs


def replay(spec_file: str, command: bool = False) -> None:
    """(Child process.) The SDK floor: load `modules`, then register `resources` (as `preview --json`
    lists them) as generic custom and component resources under mocks that echo the inputs,
    parents first; print the URNs the mock monitor registered. Runs as `eks-devices` does: the
    collector off, frozen after the imports, and no interpreter teardown. With `command`, first
    imports what `eks-devices` imports before it runs a program (`COMMAND`), and nothing more."""
    gc.disable()
    spec = json.loads(Path(spec_file).read_text())
    if command:
        load_module(COMMAND)
    import pulumi
    from pulumi.runtime.stack import run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    for name in spec["modules"]:
        load_module(name)
    gc.freeze()

    class Echo(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            return f"{args.name}-id", args.inputs

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
            return {}

    # Each resource through a class of its own, as a provider's generated classes and the toolkit's components
    # are: the SDK records the program's stack for a resource only below a third `__init__` (pulumi 3.272.0
    # `runtime/resource.py` `_get_stack_trace`), so the SDK's own classes alone would skip a cost every
    # program built on the providers' classes pays.
    class Custom(pulumi.CustomResource):
        def __init__(self, type_: str, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
            super().__init__(type_, name, props, opts)

    class Component(pulumi.ComponentResource):
        def __init__(self, type_: str, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions,
                     remote: bool) -> None:
            super().__init__(type_, name, props, opts, remote=remote)

    made: dict[str | None, pulumi.Resource] = {}

    def program() -> None:
        pending = spec.pop("resources")  # dropped as the passes go, not held beside the SDK's state
        while pending:
            later = [r for r in pending if r["parent"] is not None and r["parent"] not in made]
            if len(later) == len(pending):
                raise SystemExit(f"no parent for {[r['name'] for r in later][:5]}")
            for r in pending:
                if r["parent"] is None or r["parent"] in made:
                    opts = pulumi.ResourceOptions(parent=made.get(r["parent"]))
                    made[f"{r['type']}::{r['name']}"] = (
                        Component(r["type"], r["name"], dict(r["inputs"]), opts, r["remote"])
                        if r["component"] else Custom(r["type"], r["name"], dict(r["inputs"]), opts))
            pending = later

    pulumi.runtime.set_mocks(Echo(), project="eks-devices", stack="floor", preview=False)
    _sync_await(run_pulumi_func(program))
    registered = pulumi.runtime.settings.get_monitor().resources  # the mock monitor's, by URN
    print(json.dumps(sorted(registered)), flush=True)
    os._exit(0)


Run = tuple[float, float, float]  # wall seconds, CPU seconds, peak resident MiB


def _median(runs: list[Run], i: int) -> float:
    return statistics.median(r[i] for r in runs)


def _paired(a: list[Run], b: list[Run], i: int) -> float:
    """The median of a/b over the paired runs (NaN where a contestant did not run)."""
    return statistics.median(x[i] / y[i] for x, y in zip(a, b, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", help="the peer's command, called as `<peer> <stack file>`")
    parser.add_argument("--repeat", type=int, default=5, help="paired runs per size (medians are shown)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 200], help="pool counts (the issue's targets "
                        "are at 10 and 200 pools for CPU, at 1,000 for memory)")
    parser.add_argument("--replay", help=argparse.SUPPRESS)
    parser.add_argument("--with-command", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:
        return replay(args.replay, command=args.with_command)
    if not args.peer:
        parser.error("--peer is required")
    peer_cmd = Path(args.peer).resolve()  # the runs happen in a temporary project folder
    if not peer_cmd.is_file():
        sys.exit(f"--peer {args.peer}: no such file")
    cli = Path(sys.executable).parent / "eks-devices"
    print(install())
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(ROOT / "Pulumi.yaml", project)
        shutil.copy(ROOT / "__main__.py", project)
        (project / "stacks").mkdir()
        print(f"{'pools':>6} {'resources':>10} {'ours wall':>10} {'ours cpu':>9} {'peer wall':>10} {'peer cpu':>9} "
              f"{'floor cpu':>10} {'peer/ours wall':>15} {'peer/ours cpu':>14} {'peer/floor cpu':>15} "
              f"{'floor+cli cpu':>14} {'peer/(floor+cli) cpu':>21}")
        peaks, refused = [], []
        for size in args.sizes:
            path = project / "stacks" / f"Pulumi.peer{size}.yaml"
            path.write_text(yaml.safe_dump(stack(size)))
            # the peer installs its packages on first use; a size it refuses is measured without it
            peer_first = measured_peak([str(peer_cmd), str(path)], project)[3]
            if peer_first.returncode:
                refused.append(f"the peer fails at {size} pools ({peer_first.returncode}): "
                               f"{' '.join(peer_first.stderr.split())[:200]}")
            first = measured_peak([str(cli), "preview", f"peer{size}", "--json"], project)[3]
            if first.returncode:
                sys.exit(f"preview of {size} pools failed ({first.returncode}): {first.stderr[-300:]}")
            resources = json.loads(first.stdout)["resources"]
            modules = child("--probe-program", str(path), cwd=project)["modules"]
            spec = project / f"floor{size}.json"
            spec.write_text(json.dumps({"modules": modules, "resources": resources}))
            floor_cmd = [sys.executable, __file__, "--replay", str(spec)]
            contestants = {"ours": [str(cli), "preview", f"peer{size}", "--json"], "floor": floor_cmd,
                           "floor+cli": [*floor_cmd, "--with-command"]}
            if not peer_first.returncode:
                contestants["peer"] = [str(peer_cmd), str(path)]
            runs: dict[str, list[Run]] = {name: [] for name in contestants}
            for _ in range(args.repeat):
                for name, cmd in contestants.items():  # in turns
                    wall, cpu, mib, result = measured_peak(cmd, project)
                    if result.returncode:
                        sys.exit(f"a run of {name} failed ({result.returncode}): {result.stderr[-300:]}")
                    if name.startswith("floor") and len(json.loads(result.stdout)) != len(resources):
                        sys.exit(f"{name} registered {len(json.loads(result.stdout))} resources, the preview "
                                 f"{len(resources)}")
                    runs[name].append((wall, cpu, mib))
            nan: list[Run] = [(math.nan,) * 3] * args.repeat
            ours, peer, floor, floor_cli = runs["ours"], runs.get("peer", nan), runs["floor"], runs["floor+cli"]
            print(f"{size:>6} {len(resources):>10} {_median(ours, 0):>10.2f} {_median(ours, 1):>9.2f} "
                  f"{_median(peer, 0):>10.2f} {_median(peer, 1):>9.2f} {_median(floor, 1):>10.2f} "
                  f"{_paired(peer, ours, 0):>15.2f} {_paired(peer, ours, 1):>14.2f} {_paired(peer, floor, 1):>15.2f} "
                  f"{_median(floor_cli, 1):>14.2f} {_paired(peer, floor_cli, 1):>21.2f}", flush=True)
            peaks.append((size, _median(ours, 2), _median(peer, 2), _median(floor, 2)))
        print(f"\npeak resident MiB (medians; the peer's is its largest process)\n"
              f"{'pools':>6} {'ours':>7} {'peer':>7} {'floor':>7} {'ours/floor':>11}")
        for size, om, pm, fm in peaks:
            print(f"{size:>6} {om:>7.0f} {pm:>7.0f} {fm:>7.0f} {om / fm:>11.2f}")
        for line in refused:
            print(line)


if __name__ == "__main__":
    main()
