"""bench/peer.py's tables: CPU and peak memory for ours, the peer and the floor (CPU also for the floor with the
command's imports) at each size, and a size the peer refuses measured without it (the CDK peer stops at
CloudFormation's 500 resources a stack)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from support.stacks import ROOT

PEER = ROOT / "bench" / "peer.py"


def _rows(text: str, header: str) -> dict[int, list[str]]:
    """The rows under the table whose header line starts with `header`, by pool count."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:len(header.split())] == header.split())
    rows = {}
    for line in lines[start + 1:]:
        cells = line.split()
        if not cells or not cells[0].isdigit():
            break
        rows[int(cells[0])] = cells[1:]
    return rows


def test_a_size_the_peer_refuses_is_measured_without_it(tmp_path: Path) -> None:
    peer = tmp_path / "peer.sh"  # synthesizes 0 pools; refuses 10 as CloudFormation would
    peer.write_text('#!/bin/sh\ncase "$1" in *peer10.yaml) echo "TooManyResourcesInStack: 501" >&2; exit 3;; '
                    'esac\necho synthesized\n')
    peer.chmod(0o755)
    result = subprocess.run([sys.executable, str(PEER), "--peer", str(peer), "--repeat", "1", "--sizes", "0", "10"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    cpu = _rows(result.stdout, "pools resources")
    memory = _rows(result.stdout, "pools ours peer floor")
    assert sorted(cpu) == sorted(memory) == [0, 10]
    for size in (0, 10):
        ours_mib, peer_mib, floor_mib, ratio = (float(c) for c in memory[size])
        assert ours_mib > 50 and floor_mib > 50  # a Python process with the Pulumi SDK loaded
        assert math.isclose(ratio, ours_mib / floor_mib, rel_tol=0.02, abs_tol=0.01)
        assert math.isnan(peer_mib) == (size == 10)
        assert math.isnan(float(cpu[size][4])) == (size == 10)  # the peer's CPU
        assert not math.isnan(float(cpu[size][2])) and not math.isnan(float(cpu[size][5]))  # ours, the floor's
        assert float(cpu[size][9]) > 0  # the floor with the command's imports
        assert math.isnan(float(cpu[size][10])) == (size == 10)  # peer/(floor+cli)
    assert "the peer fails at 10 pools (3): TooManyResourcesInStack: 501" in result.stdout
    assert "fails at 0 pools" not in result.stdout
