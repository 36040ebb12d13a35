"""The ECR registries that serve EKS add-on images (the aws-dranet and EFA device plugin images), per region.

Source: EKS User Guide, "View Amazon container image registries for Amazon EKS add-ons"
(https://docs.aws.amazon.com/eks/latest/userguide/add-ons-images.html; awsdocs/amazon-eks-user-guide
`latest/ug/workloads/add-ons-images.adoc`). Account 602401143452 serves the standard commercial regions;
the opt-in regions, GovCloud and China each have their own account, and China's registries are under
`amazonaws.com.cn`. A region missing here has no registry the toolkit knows of.
"""

from __future__ import annotations

# ECR account that serves EKS add-on images in the standard commercial regions.
DEFAULT_ACCOUNT = "602401143452"

STANDARD_REGIONS: frozenset[str] = frozenset({
    "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1", "ap-southeast-1", "ap-southeast-2",
    "ca-central-1", "eu-central-1", "eu-north-1", "eu-west-1", "eu-west-2", "eu-west-3", "sa-east-1",
    "us-east-1", "us-east-2", "us-west-1", "us-west-2",
})

# Regions whose add-on images live in an account of their own.
REGIONAL_ACCOUNTS: dict[str, str] = {
    "af-south-1": "877085696533",
    "ap-east-1": "800184023465",
    "ap-east-2": "533267051163",  # the guide prints its host as ...dkr.ecr.ap-east-1...: a registry is regional
    "ap-south-2": "900889452093",
    "ap-southeast-3": "296578399912",
    "ap-southeast-4": "491585149902",
    "ap-southeast-5": "151610086707",  # on the published page; not yet in the adoc source
    "ap-southeast-6": "333609536671",
    "ap-southeast-7": "121268973566",
    "ca-west-1": "761377655185",
    "eu-central-2": "900612956339",
    "eu-south-1": "590381155156",
    "eu-south-2": "455263428931",
    "il-central-1": "066635153087",
    "me-central-1": "759879836304",
    "me-south-1": "558608220178",
    "mx-central-1": "730335286997",
    "us-gov-east-1": "151742754352",
    "us-gov-west-1": "013241004608",
    "cn-north-1": "918309763551",
    "cn-northwest-1": "961992271922",
}


def known_regions() -> list[str]:
    """Every region with a known EKS add-on registry, sorted."""
    return sorted(STANDARD_REGIONS | set(REGIONAL_ACCOUNTS))


def eks_registry(region: str) -> str | None:
    """The registry host of EKS add-on images in `region` (`602401143452.dkr.ecr.us-west-2.amazonaws.com`),
    or None for a region the table does not list."""
    if region in STANDARD_REGIONS:
        account = DEFAULT_ACCOUNT
    elif region in REGIONAL_ACCOUNTS:
        account = REGIONAL_ACCOUNTS[region]
    else:
        return None
    domain = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"{account}.dkr.ecr.{region}.{domain}"
