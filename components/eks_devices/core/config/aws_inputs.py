"""What AWS, EKS, the kubelet and Karpenter refuse in values the stack passes to them unchanged, checked
at parse time so that a refused value is a configuration problem at its path, never a failed
`pulumi up` half-way through.

Each check names its upstream source. Patterns are ASCII-only where the API's are: a Unicode digit
such as "１" is not a digit to EKS.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata

# EKS API Reference, TagResource / CreateCluster `tags`: keys 1-128 and values 0-256 characters matching
# ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$ (letters, separators, numbers and _ . : / = + - @); `aws:` is reserved.
TAG_KEY_MAX, TAG_VALUE_MAX = 128, 256
TAG_PUNCTUATION = frozenset("_.:/=+-@")


def tag_text_ok(text: str) -> bool:
    """Whether every character is one the tag pattern allows (\\p{L}, \\p{Z}, \\p{N} or _.:/=+-@)."""
    return all(c in TAG_PUNCTUATION or unicodedata.category(c)[0] in "LZN" for c in text)


# EKS API Reference, VpcConfigRequest `publicAccessCidrs`; EKS User Guide, "Amazon EKS service quotas":
# "Public endpoint access CIDR ranges per cluster": 40. The toolkit's clusters are IPv4 (kubernetesNetworkConfig
# ipFamily ipv4), whose public endpoint takes IPv4 CIDR blocks only.
MAX_PUBLIC_ACCESS_CIDRS = 40

# EC2 API Reference, Subnet `subnetId` / Vpc `vpcId`: `subnet-` / `vpc-` and 8 or 17 hex digits.
SUBNET_ID = re.compile(r"subnet-[0-9a-f]{8}([0-9a-f]{9})?")
VPC_ID = re.compile(r"vpc-[0-9a-f]{8}([0-9a-f]{9})?")

# EKS API Reference, Provider `keyArn` (EncryptionConfig): a symmetric KMS key in the cluster's region, named by
# its key ARN or an alias ARN (AWS KMS Developer Guide, "Key identifiers (KeyId)": key ids are UUIDs or mrk-<hex>).
KMS_KEY_ARN = re.compile(r"arn:aws(-cn|-us-gov)?:kms:(?P<region>[a-z]{2}(-[a-z]+)+-[0-9]):[0-9]{12}:"
                         r"(key/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})"
                         r"|alias/[A-Za-z0-9/_-]{1,250})")

# EC2 instance type names: <family><generation>[<options>].<size> (Amazon EC2 User Guide, "Amazon EC2 instance
# type naming conventions"); sizes are nano .. 48xlarge, metal and metal-<n>xl.
INSTANCE_TYPE = re.compile(r"[a-z][a-z0-9-]*[0-9][a-z0-9-]*\.(nano|micro|small|medium|large|[0-9]*xlarge|metal"
                           r"(-[0-9]+xl)?)")

def public_cidr_problems(cidrs: list[str]) -> list[tuple[int | None, str, str]]:
    """(index or None for the list, given, accepted) for publicAccessCidrs EKS refuses."""
    out: list[tuple[int | None, str, str]] = []
    for i, cidr in enumerate(cidrs):
        try:
            net = ipaddress.ip_network(cidr)
        except ValueError:
            out.append((i, repr(cidr), "an IPv4 CIDR block such as 203.0.113.0/24 (host bits zero)"))
            continue
        if net.version != 4 or not cidr.isascii():
            out.append((i, repr(cidr), "an IPv4 CIDR block: the cluster is IPv4, its public endpoint takes "
                                       "IPv4 blocks only"))
    if len(cidrs) > MAX_PUBLIC_ACCESS_CIDRS:
        out.append((None, f"{len(cidrs)} CIDR blocks", f"at most {MAX_PUBLIC_ACCESS_CIDRS} (the EKS quota "
                                                       "'Public endpoint access CIDR ranges per cluster')"))
    return out
