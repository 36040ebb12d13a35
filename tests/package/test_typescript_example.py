"""The TypeScript example's arguments are what the provider accepts (planned as the provider plans
them: no problems, no error findings), and its project adds the package."""

from __future__ import annotations

import json
import re

import yaml

from eks_devices.package.arguments import plan_inputs
from support.stacks import ROOT

EXAMPLE = ROOT / "examples" / "typescript"
ARGS = re.compile(r"// platform-args:begin\nconst args: eksDevices\.PlatformArgs = (.*?);\n// platform-args:end", re.S)


def example_args() -> dict:
    found = ARGS.search((EXAMPLE / "index.ts").read_text())
    assert found, "index.ts lost its platform-args block"
    return json.loads(found.group(1))


def test_example_arguments_plan_cleanly() -> None:
    plan = plan_inputs(example_args())
    assert not plan.errors
    assert plan.pools["h100"].managers["nvidia"].manager == "dra"
    assert plan.pools["l40s"].managers["nvidia"].manager == "device-plugin"


def test_example_project_uses_the_package() -> None:
    project = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert project["runtime"] == "nodejs"
    assert project["packages"]["eks-devices"].endswith("/components@v0.1.0")
    package = json.loads((EXAMPLE / "package.json").read_text())
    assert package["dependencies"]["@pulumi/eks-devices"] == "file:sdks/eks-devices"
