"""The Pulumi program: stack config → Spec → Plan → components → exports."""

import pulumi

from components.program import plan_for_stack
from components.report import plan_data

plan = plan_for_stack()
pulumi.export("devicePlan", plan_data(plan))
