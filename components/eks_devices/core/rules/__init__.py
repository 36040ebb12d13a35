"""The rule catalogue: every constraint of the EKS device-management page, checked before deploy.

Each rule is one small function registered once, with its stable slug, summary and the modes it
applies to (`@rule` in `registry.py`), grouped by concern in this package's modules. A rule reads the
Plan (and the Spec inside it) and yields verdicts — `error(...)` or `warning(...)`: the config path it
blames, what is wrong, and the fix — which the registry stamps with the rule's slug into Findings.
`error` findings block `pulumi up` and make the CLI exit 1; `warning` findings are printed.
A rule that can also be read from any program's resources adds `@on_resources` beside its plan check:
those rules are the policy pack's policies (`check_resources`).
`python -m eks_devices.core.rules` prints the rule table of docs/rules.md.
"""

from eks_devices.core.model import Finding, Severity
from eks_devices.core.rules import (
           auto_mode,
           charts,
           claims,
           devices,
           digests,
           efa,
           extended_resources,
           instance_types,
           karpenter,
           kubernetes_versions,
           node_groups,
           security,
)
from eks_devices.core.rules.registry import (
    REGISTRY,
    RULES,
    Blame,
    Registry,
    Rule,
    Verdict,
    Violation,
    check_resources,
    error,
    evaluate,
    markdown_table,
    on_resources,
    resource_rules,
    rule,
    warning,
)

__all__ = ["REGISTRY", "RULES", "Blame", "Finding", "Registry", "Rule", "Severity", "Verdict", "Violation",
           "auto_mode", "charts", "check_resources", "claims", "devices", "digests", "efa", "error", "evaluate",
           "extended_resources", "instance_types", "karpenter", "kubernetes_versions", "markdown_table", "node_groups",
           "on_resources", "resource_rules", "rule", "security", "warning"]
