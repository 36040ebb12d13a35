"""Side by side: `eks-devices preview <stack> --json` against a peer tool's offline artefact for the
same stack, in turns (paired runs, medians of wall and CPU from getrusage), at 10 and 200 pools.

    .venv/bin/python bench/peer.py --peer PATH/TO/peer-cdk/run.sh [--repeat 5]

The peer command is given as a path (it is not part of this repository); it is called as
`<peer> <stack file>`. The stacks are bench/preview.py's synthetic Karpenter stacks.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from preview import ROOT, install, measured, stack  # the sibling benchmark's stacks, timer and install


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", required=True, help="the peer's command, called as `<peer> <stack file>`")
    parser.add_argument("--repeat", type=int, default=5, help="paired runs per size (medians are shown)")
    args = parser.parse_args()
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
        print(f"{'pools':>6} {'ours wall':>10} {'ours cpu':>9} {'peer wall':>10} {'peer cpu':>9} "
              f"{'peer/ours wall':>15} {'peer/ours cpu':>14}")
        for size in (10, 200):
            path = project / "stacks" / f"Pulumi.peer{size}.yaml"
            path.write_text(yaml.safe_dump(stack(size)))
            measured([str(peer_cmd), str(path)], project)  # the peer installs its packages on first use
            rows = []
            for _ in range(args.repeat):
                ours_wall, ours_cpu, ours = measured([str(cli), "preview", f"peer{size}", "--json"], project)
                peer_wall, peer_cpu, peer = measured([str(peer_cmd), str(path)], project)
                if ours.returncode or peer.returncode:
                    sys.exit(f"a run failed: ours {ours.returncode} {ours.stderr[-300:]} / peer {peer.returncode} "
                             f"{peer.stderr[-300:]}")
                rows.append((ours_wall, ours_cpu, peer_wall, peer_cpu))
            ow, oc, pw, pc = (statistics.median(r[i] for r in rows) for i in range(4))
            ratio_wall = statistics.median(r[2] / r[0] for r in rows)
            ratio_cpu = statistics.median(r[3] / r[1] for r in rows)
            print(f"{size:>6} {ow:>10.2f} {oc:>9.2f} {pw:>10.2f} {pc:>9.2f} {ratio_wall:>15.2f} {ratio_cpu:>14.2f}")


if __name__ == "__main__":
    main()
