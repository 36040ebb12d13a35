"""The team's unit tests, as Pulumi's unit-testing guide writes them, with eks-devices' mocks:
no AWS account, no Pulumi CLI (`pytest` in this folder)."""
import pulumi

from eks_devices.testing import Mocks

pulumi.runtime.set_mocks(Mocks(region="us-east-2"), preview=False)  # before the program is imported

import infra  # noqa: E402  (the program registers its resources under the mocks)


@pulumi.runtime.test
def test_the_cluster_keeps_its_name() -> pulumi.Output[None]:
    def check(name: str) -> None:
        assert name == "research"

    return infra.cluster_name.apply(check)


@pulumi.runtime.test
def test_the_kubeconfig_points_at_the_cluster() -> pulumi.Output[None]:
    def check(kubeconfig: str) -> None:
        assert "research.gr7.us-east-2.eks.amazonaws.com" in kubeconfig

    return infra.kubeconfig.apply(check)


@pulumi.runtime.test
def test_the_network_spans_three_zones_of_the_region() -> pulumi.Output[None]:
    def check(zones: list[str]) -> None:
        assert zones == ["us-east-2a", "us-east-2b", "us-east-2c"]

    return infra.platform.network.availability_zones.apply(check)


def test_each_gpu_pool_runs_the_manager_the_team_chose() -> None:
    pools = infra.platform.plan.pools
    assert pools["h100"].manager("nvidia") == "dra" and pools["h100"].manager("efa") == "dra"
    assert pools["l40s"].manager("nvidia") == "device-plugin"
    assert set(infra.platform.device_software.releases) == {"nvidia-dra-driver", "aws-dranet", "nvidia-device-plugin"}
