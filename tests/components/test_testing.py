"""`eks_devices.testing`: a team's own unit tests of a program using eks-devices, written as Pulumi's
unit-testing guide shows. Each run is a pytest subprocess: `set_mocks` and the event loop are
process-wide, which is what the "other tests in the same process" checks are about."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from eks_devices import answers, testing
from eks_devices.offline import engine
from support import stacks

EXAMPLE = stacks.ROOT / "examples" / "unit-tests"

# Pulumi's unit-testing guide's mocks: every resource echoes its inputs, calls return nothing.
ECHO = '''
import pulumi
{base_import}

class EchoMocks({base}):
    def new_resource(self, args):
        return [args.name + "_id", args.inputs]

    def call(self, args):
        return {{}}

pulumi.runtime.set_mocks(EchoMocks(), preview=False)
'''
PLATFORM = '''
from eks_devices import Platform, PlatformArgs

def platform(network=None):
    return Platform("research", PlatformArgs(
        region="us-east-2", cluster={"name": "research", "version": "1.36", "mode": "karpenter"},
        network=network or {}, node_pools={"h100": {"instanceTypes": ["p5.48xlarge"]}}))
'''
UNRELATED = '''
import pulumi
import pulumi_aws as aws

@pulumi.runtime.test
def test_a_bucket_after_the_failures():
    def check(tags):
        assert tags == {"team": "research"}
    return aws.s3.Bucket("bucket", tags={"team": "research"}).tags.apply(check)
'''


def run_pytest(folder: Path, *args: str) -> dict[str, str]:
    """Run pytest in `folder` (its own project); each test's outcome and message by name."""
    report = folder / "report.xml"
    # this checkout's package, whatever is installed (a relative PYTHONPATH would not reach it from `folder`)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stacks.ROOT / "components"),
                                                         *filter(None, [os.environ.get("PYTHONPATH")])])}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                    f"--junitxml={report}", *args], cwd=folder, capture_output=True, text=True, timeout=600, env=env)
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        outcomes[case.get("name", "")] = "passed" if failure is None else "failed: " + (failure.text or "")
    return outcomes


def test_the_example_program_passes_its_own_unit_tests_under_the_public_mocks(tmp_path: Path) -> None:
    outcomes = run_pytest(EXAMPLE, f"--basetemp={tmp_path / 'base'}", "-o", "junit_family=xunit1")
    assert len(outcomes) == 4 and set(outcomes.values()) == {"passed"}, outcomes
    (EXAMPLE / "report.xml").unlink()


def test_guide_style_mocks_fail_before_registering_naming_every_answer_and_break_no_other_test(
        tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a_platform.py").write_text(ECHO.format(base_import="", base="pulumi.runtime.Mocks") + PLATFORM + '''
import pytest
from eks_devices.answers import MissingMockAnswers

@pulumi.runtime.test
def test_zone_count():
    return platform().cluster.name

@pulumi.runtime.test
def test_listed_zones():
    return platform({"availabilityZones": ["us-east-2a", "us-east-2b"]}).cluster.name
''')
    (tmp_path / "test_b_unrelated.py").write_text(UNRELATED)
    outcomes = run_pytest(tmp_path)
    assert outcomes["test_a_bucket_after_the_failures"] == "passed"
    counted, listed = outcomes["test_zone_count"], outcomes["test_listed_zones"]
    for message in (counted, listed):
        assert "MissingMockAnswers: Platform: the mocks (EchoMocks) do not answer what it reads" in message
        assert "eks:index:Cluster: eksCluster, clusterSecurityGroupId, kubeconfigJson" in message
        assert "aws:index/getCallerIdentity:getCallerIdentity: accountId" in message
        assert "use eks_devices.testing.Mocks" in message
        assert "AttributeError" not in message and "NoneType" not in message
    assert "aws:index/getAvailabilityZones:getAvailabilityZones: names" in counted
    assert "getAvailabilityZones" not in listed  # listed zones need no call


def test_mocks_that_claim_to_answer_but_do_not_fail_at_the_read_with_its_name(tmp_path: Path) -> None:
    """Mocks built on AnsweringMocks are not asked up front: the read itself names the missing answer."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a_platform.py").write_text(ECHO.format(
        base_import="from eks_devices.answers import AnsweringMocks", base="AnsweringMocks") + PLATFORM + '''
@pulumi.runtime.test
def test_listed_zones():
    return platform({"availabilityZones": ["us-east-2a", "us-east-2b"]}).cluster.name
''')
    outcomes = run_pytest(tmp_path)
    message = outcomes["test_listed_zones"]
    assert "MissingMockAnswers: the engine left empty what eks-devices reads:" in message
    assert "use eks_devices.testing.Mocks" in message
    assert any(f"{r.token}: {f} (" in message for r in answers.READS for f in r.fields)
    assert "AttributeError" not in message


def test_the_offline_engine_runs_on_the_public_mocks_which_answer_every_read() -> None:
    assert engine.OfflineMocks is testing.Mocks
    mocks = testing.Mocks("eu-west-1")
    calls = [r for r in answers.READS if r.kind == "call"]
    assert {r.token for r in calls} == {answers.AVAILABILITY_ZONES.token, answers.SUBNET.token,
                                        answers.CALLER_IDENTITY.token, answers.SESSION_CONTEXT.token}
    for read in calls:
        answer, _ = mocks.call(pulumi_call(read.token, {"id": "subnet-0000000a"}))
        assert all(answer.get(f) is not None for f in read.fields), read.token
    assert mocks.call(pulumi_call(answers.AVAILABILITY_ZONES.token, {}))[0]["names"][0] == "eu-west-1a"


def pulumi_call(token: str, args: dict[str, str]) -> object:
    import pulumi

    return pulumi.runtime.MockCallArgs(token, args, "")



def test_public_mocks_of_another_region_fail_before_registering_naming_the_region_and_break_no_other_test(
        tmp_path: Path) -> None:
    """`Mocks()` answers for us-west-2; a program in us-east-2 would get another region's zones (a pinned
    zone then fails inside the event loop, and every later test of the process with it)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a_platform.py").write_text('''
import pulumi
from eks_devices import Platform, PlatformArgs
from eks_devices.testing import Mocks

pulumi.runtime.set_mocks(Mocks(), preview=False)

def test_a_pinned_pool():
    Platform("research", PlatformArgs(
        region="us-east-2", cluster={"name": "research", "version": "1.36", "mode": "karpenter"},
        node_pools={"h100": {"instanceTypes": ["p5.48xlarge"], "availabilityZone": "us-east-2b"}}))
''')
    (tmp_path / "test_b_unrelated.py").write_text(UNRELATED)
    outcomes = run_pytest(tmp_path)
    assert outcomes["test_a_bucket_after_the_failures"] == "passed"
    message = outcomes["test_a_pinned_pool"]
    assert ("MissingMockAnswers: Platform: the mocks (Mocks) answer for region us-west-2 (its zones, ARNs and "
            "endpoints), but the program's region is us-east-2") in message
    assert "Mocks(region='us-east-2')" in message
