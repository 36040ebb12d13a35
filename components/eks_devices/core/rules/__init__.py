"""The rule catalogue: every constraint of the EKS device-management page, checked before deploy.

Each rule is one small function registered once, with its stable slug, summary and the modes it
applies to (`@rule` in `registry.py`), grouped by concern or by device family in this package's modules.
A rule reads the Plan (and the Spec inside it) and yields verdicts — `error(...)` or `warning(...)`: the config path it
blames, what is wrong, and the fix — which the registry stamps with the rule's slug into Findings.
`error` findings block `pulumi up` and make the CLI exit 1; `warning` findings are printed.
A rule that can also be read from any program's resources adds `@on_resources` beside its plan check:
those rules are the policy pack's policies (`check_resources`).
`python -m eks_devices.core.rules` prints the rule table of docs/rules.md.
"""

import importlib
import pkgutil

from eks_devices.core.model import Finding, Severity
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

# Every module of this package but the registry holds rules; importing them registers them, in file-name order.
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("registry", "__main__"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["REGISTRY", "RULES", "Blame", "Finding", "Registry", "Rule", "Severity", "Verdict", "Violation",
           "check_resources", "error", "evaluate", "markdown_table", "on_resources", "resource_rules", "rule",
           "warning"]
