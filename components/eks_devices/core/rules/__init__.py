"""The rule catalogue: every constraint of the EKS device-management page, checked before deploy.

Each rule is one small function registered under a stable slug (`@rule` in `registry.py`), grouped
by concern in this package's modules. A rule reads the Plan (and the Spec inside it) and yields
Findings: severity, the config path it blames, what is wrong, and the fix. `error` findings block
`pulumi up` and make the CLI exit 1; `warning` findings are printed.
"""

from eks_devices.core.model import Finding, Severity
from eks_devices.core.rules import (
           auto_mode,
           claims,
           devices,
           efa,
           instance_types,
           karpenter,
           kubernetes_versions,
           node_groups,
)
from eks_devices.core.rules.registry import RULES, Rule, evaluate, rule

__all__ = ["RULES", "Finding", "Rule", "Severity", "auto_mode", "claims", "devices", "efa", "evaluate",
           "instance_types", "karpenter", "kubernetes_versions", "node_groups", "rule"]
