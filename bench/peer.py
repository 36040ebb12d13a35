"""Side by side: `eks-devices preview <stack> --json` against a peer tool's offline artefact for the
same stack, in turns (paired runs, medians of wall and CPU from getrusage), at 10 and 200 pools, next
to the Pulumi SDK's own floor for the same resources.

    .venv/bin/python bench/peer.py --peer PATH/TO/peer-cdk/run.sh [--repeat 5]

The peer command is given as a path (it is not part of this repository); it is called as
`<peer> <stack file>`. The stacks are bench/preview.py's synthetic Karpenter stacks.

The SDK floor is a Python program with none of the toolkit in it (`replay`): it loads the SDK modules
the toolkit's program loads for the stack and registers the resources the preview listed (their types,
names, parents and inputs) as the SDK's generic resources under Pulumi's own mocks. It passes no
resource options and no outputs from one resource to another, which a real program needs and pays
for: peer/floor is about the most peer/ours could be for any program built on these SDKs.
"""

from __future__ import annotations

import argparse
import gc
import json
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
from preview import ROOT, child, install, load_module, measured, stack


def replay(spec_file: str) -> None:
    """(Child process.) The SDK floor: load `modules`, then register `resources` (as `preview --json`
    lists them) as generic CustomResources and ComponentResources under mocks that echo the inputs,
    parents first; print the URNs the mock monitor registered. Runs as `eks-devices` does: the
    collector off, frozen after the imports, and no interpreter teardown."""
    gc.disable()
    spec = json.loads(Path(spec_file).read_text())
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

    made: dict[str | None, pulumi.Resource] = {}

    def program() -> None:
        pending = spec["resources"]
        while pending:
            later = [r for r in pending if r["parent"] is not None and r["parent"] not in made]
            if len(later) == len(pending):
                raise SystemExit(f"no parent for {[r['name'] for r in later][:5]}")
            for r in pending:
                if r["parent"] is None or r["parent"] in made:
                    opts = pulumi.ResourceOptions(parent=made.get(r["parent"]))
                    made[f"{r['type']}::{r['name']}"] = (
                        pulumi.ComponentResource(r["type"], r["name"], dict(r["inputs"]), opts, remote=r["remote"])
                        if r["component"] else pulumi.CustomResource(r["type"], r["name"], dict(r["inputs"]), opts))
            pending = later

    pulumi.runtime.set_mocks(Echo(), project="eks-devices", stack="floor", preview=False)
    _sync_await(run_pulumi_func(program))
    registered = pulumi.runtime.settings.get_monitor().resources  # the mock monitor's, by URN
    print(json.dumps(sorted(registered)), flush=True)
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", help="the peer's command, called as `<peer> <stack file>`")
    parser.add_argument("--repeat", type=int, default=5, help="paired runs per size (medians are shown)")
    parser.add_argument("--replay", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:
        return replay(args.replay)
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
              f"{'floor cpu':>10} {'peer/ours wall':>15} {'peer/ours cpu':>14} {'peer/floor cpu':>15}")
        for size in (10, 200):
            path = project / "stacks" / f"Pulumi.peer{size}.yaml"
            path.write_text(yaml.safe_dump(stack(size)))
            measured([str(peer_cmd), str(path)], project)  # the peer installs its packages on first use
            _, _, first = measured([str(cli), "preview", f"peer{size}", "--json"], project)
            if first.returncode:
                sys.exit(f"preview of {size} pools failed ({first.returncode}): {first.stderr[-300:]}")
            resources = json.loads(first.stdout)["resources"]
            modules = child("--probe-program", str(path), cwd=project)["modules"]
            spec = project / f"floor{size}.json"
            spec.write_text(json.dumps({"modules": modules, "resources": resources}))
            floor_cmd = [sys.executable, __file__, "--replay", str(spec)]
            rows = []
            for _ in range(args.repeat):
                ours_wall, ours_cpu, ours = measured([str(cli), "preview", f"peer{size}", "--json"], project)
                peer_wall, peer_cpu, peer = measured([str(peer_cmd), str(path)], project)
                _, floor_cpu, floor = measured(floor_cmd, project)
                if ours.returncode or peer.returncode or floor.returncode:
                    sys.exit(f"a run failed: ours {ours.returncode} {ours.stderr[-300:]} / peer {peer.returncode} "
                             f"{peer.stderr[-300:]} / floor {floor.returncode} {floor.stderr[-300:]}")
                if len(json.loads(floor.stdout)) != len(resources):
                    sys.exit(f"the floor registered {len(json.loads(floor.stdout))} resources, the preview "
                             f"{len(resources)}")
                rows.append((ours_wall, ours_cpu, peer_wall, peer_cpu, floor_cpu))
            ow, oc, pw, pc, fc = (statistics.median(r[i] for r in rows) for i in range(5))
            ratio_wall, ratio_cpu, ratio_floor = (statistics.median(r[a] / r[b] for r in rows)
                                                  for a, b in ((2, 0), (3, 1), (3, 4)))
            print(f"{size:>6} {len(resources):>10} {ow:>10.2f} {oc:>9.2f} {pw:>10.2f} {pc:>9.2f} {fc:>10.2f} "
                  f"{ratio_wall:>15.2f} {ratio_cpu:>14.2f} {ratio_floor:>15.2f}")


if __name__ == "__main__":
    main()
