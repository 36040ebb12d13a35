"""What the components read back from the engine: the provider functions they call and the outputs
of the remote component they create (pulumi-eks's `eks:index:Cluster`), each field once.

Under `pulumi up` the providers always answer these. Under `pulumi.runtime.set_mocks` the team's
mocks answer them, and mocks written as Pulumi's unit-testing guide shows (echo the inputs, return
`{}` from calls) leave them empty. So, under a mock engine whose mocks are not
`eks_devices.testing.Mocks`, a component asks the mocks up front for what it will read and raises
one `MissingMockAnswers` naming every missing answer before it registers anything (a failure
inside a registration would stay in the event loop and fail the process's later tests); the reads
themselves check their values too, for mocks that answer the probe but not the real call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings

HINT = "use eks_devices.testing.Mocks (or subclass it) as your mocks, or answer these in yours"


@dataclass(frozen=True)
class Read:
    """One thing a component reads from the engine: a function's result fields (`call`) or a remote
    component's outputs (`resource`), and what the component needs them for."""

    kind: Literal["call", "resource"]
    token: str
    fields: tuple[str, ...]
    purpose: str

    def describe(self, missing: Iterable[str]) -> str:
        where = "Mocks.call result" if self.kind == "call" else "Mocks.new_resource outputs"
        return f"{self.token}: {', '.join(missing)} ({where}; {self.purpose})"


AVAILABILITY_ZONES = Read("call", "aws:index/getAvailabilityZones:getAvailabilityZones", ("names",),
                          "the zones a count of network.availabilityZones picks")
SUBNET = Read("call", "aws:ec2/getSubnet:getSubnet", ("availabilityZone",), "the zone of each brought subnet")
CALLER_IDENTITY = Read("call", "aws:index/getCallerIdentity:getCallerIdentity", ("accountId", "arn"),
                       "the account in the KMS key and Karpenter policies, and who runs the program")
SESSION_CONTEXT = Read("call", "aws:iam/getSessionContext:getSessionContext", ("issuerArn",),
                       "the IAM role (or user) behind the caller, which gets the cluster's declared admin entry")
EKS_CLUSTER = Read("resource", "eks:index:Cluster", ("eksCluster", "clusterSecurityGroupId", "kubeconfigJson"),
                   "a remote component: its provider computes them, so mocks must return them; eksCluster is a "
                   "reference to its aws:eks/cluster:Cluster, whose name the cluster's children use")


# pulumi-eks's child that is the EKS cluster (its `eksCluster` output), and the call that finds an access
# entry EKS already has (a failed call when there is none: not a Read, its absence is an answer)
EKS_CLUSTER_CHILD = "aws:eks/cluster:Cluster"
ACCESS_ENTRY = "aws:eks/getAccessEntry:getAccessEntry"

READS = (AVAILABILITY_ZONES, SUBNET, CALLER_IDENTITY, SESSION_CONTEXT, EKS_CLUSTER)


class MissingMockAnswers(pulumi.RunError):
    """The mock engine does not answer what the program reads; the message names each answer."""


class AnsweringMocks(pulumi.runtime.Mocks):
    """Mocks that answer every Read above (`eks_devices.testing.Mocks`): the components trust them
    and ask nothing up front."""


def _active_mocks() -> pulumi.runtime.Mocks | None:
    """The mocks of the mock engine the program runs under, if it does and they are not answering ones."""
    monitor = pulumi_settings.get_monitor()
    mocks = getattr(monitor, "mocks", None) if isinstance(monitor, pulumi_mocks.MockMonitor) else None
    return None if mocks is None or isinstance(mocks, AnsweringMocks) else mocks


def _unanswered(read: Read, answer: Any) -> list[str]:
    answer = answer if isinstance(answer, dict) else {}
    return [f for f in read.fields if answer.get(f) is None]


def check_mocks(component: str, reads: Iterable[tuple[Read, dict[str, Any]]]) -> None:
    """Under foreign mocks, ask them each `(read, probe arguments or inputs)` and raise one
    MissingMockAnswers naming every field they leave empty; otherwise do nothing."""
    mocks = _active_mocks()
    if mocks is None:
        return
    lines = []
    for read, args in reads:
        try:
            if read.kind == "call":
                answer: Any = mocks.call(pulumi_mocks.MockCallArgs(read.token, dict(args), ""))
                answer = answer if isinstance(answer, dict) else answer[0]  # a dict, or (dict, failures)
            else:
                answer = mocks.new_resource(pulumi_mocks.MockResourceArgs(
                    typ=read.token, name=str(args.get("name", component)), inputs=dict(args), custom=False))[1]
        except Exception as exc:  # a mock failing on the probe is reported, never raised inside Pulumi
            lines.append(f"{read.describe(read.fields)}: the mock raised {type(exc).__name__}: {exc}")
            continue
        if missing := _unanswered(read, answer):
            lines.append(read.describe(missing))
    if lines:
        raise MissingMockAnswers(f"{component}: the mocks ({type(mocks).__qualname__}) do not answer what it reads:\n"
                                 + "\n".join(f"  - {line}" for line in lines) + f"\n{HINT}")


def check_region(component: str, region: str) -> None:
    """Under mocks that answer for a region (`eks_devices.testing.Mocks(region=...)`: zones, ARNs,
    endpoints), raise MissingMockAnswers when it is not the program's: their zones would not be the
    region's (a pinned zone then fails inside the event loop, and the process's later tests with it)."""
    monitor = pulumi_settings.get_monitor()
    mocks = getattr(monitor, "mocks", None) if isinstance(monitor, pulumi_mocks.MockMonitor) else None
    answering = getattr(mocks, "region", None) if isinstance(mocks, AnsweringMocks) else None
    if isinstance(answering, str) and answering != region:
        raise MissingMockAnswers(f"{component}: the mocks ({type(mocks).__qualname__}) answer for region {answering} "
                                 f"(its zones, ARNs and endpoints), but the program's region is {region}: give the "
                                 f"mocks the program's region, {type(mocks).__qualname__}(region={region!r})")


def answered(read: Read, field: str, value: Any) -> Any:
    """`value` as read from the engine, or MissingMockAnswers naming it when the engine left it empty."""
    if value is None:
        raise MissingMockAnswers(f"the engine left empty what eks-devices reads: {read.describe([field])}; "
                                 f"under pulumi.runtime.set_mocks, {HINT}")
    return value
