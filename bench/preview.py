"""Benchmark: `eks-devices preview` wall time against the size of a stack.

For synthetic Karpenter stacks of 0, 1, 10, 50 and 200 node pools it prints the wall time of
`eks-devices preview <stack> --json` (a fresh process, like a user runs it) and the number of
resources the program registers, the cost per pool above the 0-pool run, next to the time of a bare
`import pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes` measured in the same run.

    .venv/bin/python bench/preview.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SIZES = (0, 1, 10, 50, 200)  # 0: the fixed cost (network, cluster, the SDK modules they load)
# Pool shapes cycled through: every family and manager, static and dynamic, Bottlerocket.
SHAPES = (
    {"instanceTypes": ["p5.48xlarge"], "efa": {"alignWith": "gpu"}},
    {"instanceTypes": ["g6e.xlarge", "g6e.2xlarge"], "devices": {"nvidia": "device-plugin"},
     "gpuSharing": {"strategy": "time-slicing", "replicas": 4}},
    {"instanceTypes": ["trn2.48xlarge"], "provisioning": "static", "replicas": 2, "efa": {"alignWith": "neuron"}},
    {"instanceTypes": ["g6.xlarge"], "ami": "bottlerocket"},
    {"instanceTypes": ["inf2.xlarge"], "devices": {"neuron": "device-plugin"}},
)


def stack(pools: int) -> dict:
    return {"config": {
        "aws:region": "us-west-2",
        "eks-devices:cluster": {"name": f"bench-{pools}", "version": "1.36", "mode": "karpenter"},
        "eks-devices:nodePools": {f"pool-{i:03d}": SHAPES[i % len(SHAPES)] for i in range(pools)},
    }}


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, result


def in_process(stack_file: Path) -> tuple[float, float]:
    """The program's first and second run in one process: the difference is the SDK modules the
    first run loads (they load lazily, so a bare import does not pay for them)."""
    code = ("import runpy, sys, time, yaml\nfrom components import offline\n"
            f"cfg = yaml.safe_load(open({str(stack_file)!r}))['config']\n"
            "for _ in range(2):\n    t = time.perf_counter()\n"
            "    offline.run(lambda: runpy.run_path('__main__.py'), cfg, stack='bench')\n"
            "    print(time.perf_counter() - t)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=stack_file.parent.parent, capture_output=True,
                            text=True, check=True)
    first, second = (float(x) for x in result.stdout.split())
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median is shown)")
    args = parser.parse_args()
    exe = Path(sys.executable)
    cli = exe.parent / "eks-devices"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(ROOT / "Pulumi.yaml", project)
        shutil.copy(ROOT / "__main__.py", project)
        (project / "stacks").mkdir()
        for size in SIZES:
            (project / "stacks" / f"Pulumi.bench{size}.yaml").write_text(yaml.safe_dump(stack(size)))
        bare = statistics.median(
            timed([str(exe), "-c", "import pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes"], project)[0]
            for _ in range(args.repeat))
        print(f"bare import of pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes: {bare:.2f}s")
        print(f"{'pools':>6} {'resources':>10} {'preview s':>10} {'x import':>9} {'ms/pool':>8}")
        fixed = 0.0
        for size in SIZES:
            runs = []
            for _ in range(args.repeat):
                seconds, result = timed([str(cli), "preview", f"bench{size}", "--json"], project)
                if result.returncode != 0:
                    sys.exit(f"preview of {size} pools failed ({result.returncode}):\n{result.stderr}")
                runs.append(seconds)
            resources = len(json.loads(result.stdout)["resources"])
            median = statistics.median(runs)
            fixed = median if size == 0 else fixed
            per_pool = 1000 * (median - fixed) / size if size else 0.0
            print(f"{size:>6} {resources:>10} {median:>10.2f} {median / bare:>9.2f} {per_pool:>8.1f}")
        first, second = in_process(project / "stacks" / "Pulumi.bench10.yaml")
        print(f"10 pools in one process: first run {first:.2f}s, second run {second:.2f}s "
              f"(SDK modules loaded on first use: {first - second:.2f}s)")


if __name__ == "__main__":
    main()
