"""Benchmark: `eks-devices preview` wall time against the size of a stack.

For synthetic Karpenter stacks of 0, 10, 50, 200, 1,000 and 3,000 node pools it prints, for
`eks-devices preview <stack> --json` (a fresh process, like a user runs it), the wall and CPU time
(user + system of that child, `os.wait4`), the CPU per pool above the 0-pool run, the peak resident
memory and its growth per pool, the number of resources the program registers, and the wall and CPU
time of `eks-devices check` of the same stack (paired runs, medians), next to the time of a bare
`import pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes` measured in the same run.

The Pulumi SDKs load their resource modules lazily, on first use, so the bare import pays for
almost none of them. The benchmark therefore also times the floor any program using these SDK
classes pays: a fresh process doing the bare import and then loading the SDK modules the 10-pool
program loads (found by running it), and how much each of them costs. Both that process and
`eks-devices` end without interpreter teardown. Last, it prints the CPU per pool of a preview's work
(load, plan, program, JSON) in a process that has already loaded the modules with the 0-pool stack:
the growth with the stack's size, without the imports' run-to-run noise.

    .venv/bin/python bench/preview.py [--repeat N]

It measures the toolkit as installed in the interpreter's environment and says which install that
is: users get a normal install (the README's first command, `requirements.txt`: bytecode compiled
by pip), developers an editable one (`requirements-dev.txt`: with this environment's
`PYTHONDONTWRITEBYTECODE=1` its modules compile on every run). Measure what users run:

    python3 -m venv /tmp/users && /tmp/users/bin/pip install -q -r requirements.txt
    /tmp/users/bin/python bench/preview.py
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SIZES = (0, 10, 50, 200, 1000, 3000)  # 0: the fixed cost (network, cluster, the SDK modules they load)
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
    """A Karpenter stack of `pools` pools cycling through SHAPES, each pool its own copy (so the YAML
    written has no aliases: stack files allow 1,000)."""
    return {"config": {
        "aws:region": "us-west-2",
        "eks-devices:cluster": {"name": f"bench-{pools}", "version": "1.36", "mode": "karpenter"},
        "eks-devices:nodePools": {f"pool-{i:04d}": copy.deepcopy(SHAPES[i % len(SHAPES)]) for i in range(pools)},
    }}


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    seconds, _, result = measured(cmd, cwd)
    return seconds, result


def measured(cmd: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds, CPU seconds (user + system of the child, from getrusage) and the result."""
    wall, cpu, _, result = measured_peak(cmd, cwd)
    return wall, cpu, result


def measured_peak(cmd: list[str], cwd: Path) -> tuple[float, float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds, CPU seconds and peak resident MiB of this one child (`os.wait4`: its own
    rusage, not the maximum over every child so far), and the result."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(cmd, child.returncode, out.read(), err.read())
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, result


SDKS = ("pulumi_aws", "pulumi_eks", "pulumi_kubernetes")
BARE = "import pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes"


def probe_program(stack_file: str) -> None:
    """(Child process.) Run the program twice in this process; print both times and the SDK
    packages the runs loaded (a lazy module object becomes a plain module once loaded)."""
    import runpy
    import types

    from eks_devices.offline import engine as offline

    config = yaml.safe_load(Path(stack_file).read_text())["config"]
    runs = []
    for _ in range(2):
        started = time.perf_counter()
        offline.run(lambda: runpy.run_path("__main__.py"), config, stack="bench")
        runs.append(time.perf_counter() - started)
    loaded = sorted(name for name, module in sys.modules.items()
                    if name.startswith(SDKS) and "." in name and type(module) is types.ModuleType
                    and (getattr(module, "__file__", "") or "").endswith("__init__.py"))
    print(json.dumps({"runs": runs, "modules": loaded}))


def probe_scaling(stacks: str, size: int) -> None:
    """(Child process.) As `eks-devices preview` does its work once the modules are loaded: the 0-pool
    stack first (it loads them), then `size` pools; print the second's CPU seconds. Without the
    imports, whose noise dwarfs a small stack's cost in a fresh process, the per-pool figures of two
    sizes compare the program's own growth."""
    from eks_devices.cli import collector
    from eks_devices.core import planner
    from eks_devices.core.config import stack_file
    from eks_devices.offline.preview import resources_data, run_program

    directory = Path(stacks)
    seconds = 0.0
    for name in ("bench0", f"bench{size}"):
        started = time.process_time()
        config = stack_file.read_config(directory / f"Pulumi.{name}.yaml")
        plan = planner.build(stack_file.load(name, directory))
        collector.off()  # as the CLI runs the program (`cli/app.py`, `_run_offline`)
        run = run_program(directory.parent, name, config, plan, collector.young_generation)
        collector.off()
        json.dumps(resources_data(run.recording))
        seconds = time.process_time() - started
    print(json.dumps(seconds))


def load_module(name: str) -> None:
    """Import `name` and load it, if the SDK made it lazy (reading an attribute loads a lazy module)."""
    import importlib

    getattr(importlib.import_module(name), "__all__", None)


def probe_modules(modules: list[str]) -> None:
    """(Child process.) The bare import, then each module loaded in turn; print each one's seconds."""
    import pulumi  # noqa: F401
    import pulumi_aws  # noqa: F401
    import pulumi_eks  # noqa: F401
    import pulumi_kubernetes  # noqa: F401

    costs = {}
    for name in modules:
        started = time.perf_counter()
        load_module(name)
        costs[name] = time.perf_counter() - started
    print(json.dumps(costs))


def install() -> str:
    """Which install of the toolkit this environment holds (PEP 610's direct_url.json says editable), and
    which interpreter runs it: the interpreter's build moves every figure (on one machine, a CPython built
    without profile-guided optimisation and with a shared libpython took ~1.2x the CPU of the
    distribution's build; docs/performance.md)."""
    import sysconfig
    from importlib.metadata import distribution

    direct = json.loads(distribution("eks-devices").read_text("direct_url.json") or "{}")
    if direct.get("dir_info", {}).get("editable"):
        how = "eks-devices installed editable (requirements-dev.txt): its modules compile on every run"
    else:
        how = "eks-devices installed as users install it (requirements.txt): bytecode compiled at install"
    configured = str(sysconfig.get_config_var("CONFIG_ARGS") or "")
    flags = " ".join(flag for flag in ("--enable-optimizations", "--with-lto") if flag in configured)
    maps = Path("/proc/self/maps")
    linked = ("libpython a shared library" if "libpython" in maps.read_text() else "libpython in the executable"
              ) if maps.exists() else "libpython's linking unknown"
    return (f"{how}\ninterpreter: {os.path.realpath(sys.executable)}, CPython {platform.python_version()}, "
            f"{linked}, configured with {flags or 'no optimisation flags (distributions may optimise unsaid)'}")


def child(*args: str, cwd: Path) -> dict:
    result = subprocess.run([sys.executable, __file__, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="paired runs per measurement (medians are shown)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="pool counts (0 first: the "
                        "per-pool figures are above it)")
    parser.add_argument("--probe-program", help=argparse.SUPPRESS)
    parser.add_argument("--probe-modules", help=argparse.SUPPRESS)
    parser.add_argument("--probe-scaling", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_program:
        return probe_program(args.probe_program)
    if args.probe_scaling:
        return probe_scaling(args.probe_scaling[0], int(args.probe_scaling[1]))
    if args.probe_modules:
        return probe_modules(json.loads(args.probe_modules))
    exe = Path(sys.executable)
    cli = exe.parent / "eks-devices"
    print(install())
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(ROOT / "Pulumi.yaml", project)
        shutil.copy(ROOT / "__main__.py", project)
        (project / "stacks").mkdir()
        for size in {*args.sizes, 10}:  # 10: the program probed for the SDK modules it loads
            (project / "stacks" / f"Pulumi.bench{size}.yaml").write_text(yaml.safe_dump(stack(size)))
        probe = child("--probe-program", str(project / "stacks" / "Pulumi.bench10.yaml"), cwd=project)
        modules, (first, second) = probe["modules"], probe["runs"]
        # ends like `eks-devices` does, without interpreter teardown (which alone costs ~0.5 s once
        # these modules are loaded)
        load_all = [str(exe), "-c", f"import importlib, os\n{BARE}\n"
                    f"for m in {modules!r}: getattr(importlib.import_module(m), '__all__', None)\nos._exit(0)"]
        bare = statistics.median(timed([str(exe), "-c", BARE], project)[0] for _ in range(args.repeat))
        floor = statistics.median(timed(load_all, project)[0] for _ in range(args.repeat))
        print(f"bare import of pulumi, pulumi_aws, pulumi_eks, pulumi_kubernetes: {bare:.2f}s")
        print(f"bare import + the {len(modules)} SDK modules the program loads: {floor:.2f}s "
              f"({floor / bare:.2f}x the bare import, before any resource is registered)")
        costs = child("--probe-modules", json.dumps(modules), cwd=project)
        for name, cost in sorted(costs.items(), key=lambda kv: -kv[1])[:4]:
            print(f"  {name}: {cost:.2f}s")
        print(f"  {len(costs) - 4} others: {sum(sorted(costs.values())[:-4]):.2f}s")
        print(f"{'pools':>6} {'resources':>10} {'wall s':>7} {'cpu s':>6} {'x import':>9} {'cpu ms/pool':>12} "
              f"{'peak MiB':>9} {'KiB/pool':>9} {'check wall':>11} {'check cpu':>10}")
        fixed_cpu = fixed_peak = 0.0  # the 0-pool run: per pool is the cost above it
        for size in args.sizes:
            walls, cpus, checks, peaks, check_cpus = [], [], [], [], []
            for _ in range(args.repeat):  # paired: a preview and a check of the same stack, back to back
                seconds, cpu, peak, result = measured_peak([str(cli), "preview", f"bench{size}", "--json"], project)
                peaks.append(peak)
                if result.returncode != 0:
                    sys.exit(f"preview of {size} pools failed ({result.returncode}):\n{result.stderr}")
                walls.append(seconds)
                cpus.append(cpu)
                checked, check_cpu, check_result = measured([str(cli), "check", f"bench{size}"], project)
                check_cpus.append(check_cpu)
                if check_result.returncode != 0:
                    sys.exit(f"check of {size} pools failed ({check_result.returncode}):\n{check_result.stdout}")
                checks.append(checked)
            resources = len(json.loads(result.stdout)["resources"])
            median, cpu_median, check_median, peak, check_cpu = (
                statistics.median(v) for v in (walls, cpus, checks, peaks, check_cpus))
            fixed_cpu, fixed_peak = (cpu_median, peak) if size == 0 else (fixed_cpu, fixed_peak)
            per_pool = 1000 * (cpu_median - fixed_cpu) / size if size else 0.0
            kib_per_pool = 1024 * (peak - fixed_peak) / size if size else 0.0
            print(f"{size:>6} {resources:>10} {median:>7.2f} {cpu_median:>6.2f} {median / bare:>9.2f} "
                  f"{per_pool:>12.1f} {peak:>9.0f} {kib_per_pool:>9.0f} {check_median:>11.2f} {check_cpu:>10.2f}")
        print(f"10 pools in one process: first run {first:.2f}s, second run {second:.2f}s "
              f"(SDK modules loaded on first use: {first - second:.2f}s)")
        in_process(args.sizes, args.repeat, project)


def in_process(sizes: list[int], repeat: int, project: Path) -> None:
    """CPU per pool with the modules already loaded (`probe_scaling`), medians of `repeat` paired runs."""
    cpu: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(repeat):
        for size in sizes:
            cpu[size].append(float(child("--probe-scaling", str(project / "stacks"), str(size), cwd=project)))
    fixed = statistics.median(cpu[0]) if 0 in cpu else 0.0
    figures = [f"{size} pools {1000 * (statistics.median(cpu[size]) - fixed) / size:.1f}"
               for size in sizes if size]
    print(f"preview CPU ms per pool with the modules loaded (above 0 pools {fixed:.2f}s): {', '.join(figures)}")


if __name__ == "__main__":
    main()
