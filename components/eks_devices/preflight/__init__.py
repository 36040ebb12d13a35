"""Read-only preflight of a stack against a live AWS account (`eks-devices preflight STACK`).

`run_preflight(plan, session)` returns one `CheckResult` per verdict; `API_CALLS` lists every AWS
call it can make (the source of `policies/preflight-readonly.json`).
"""

from eks_devices.preflight.aws import API_CALLS, ApiCall, AwsReader, Denied, PreflightAborted, open_session
from eks_devices.preflight.model import STATUSES, CheckResult, Context, Status
from eks_devices.preflight.output import results_data
from eks_devices.preflight.runner import CHECKS, Check, run_check, run_preflight

__all__ = [
    "API_CALLS", "CHECKS", "STATUSES", "ApiCall", "AwsReader", "Check", "CheckResult", "Context", "Denied",
    "PreflightAborted", "Status", "open_session", "results_data", "run_check", "run_preflight",
]
