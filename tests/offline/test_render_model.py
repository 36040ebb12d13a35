"""What `render` checks beyond the kinds' schemas, as the API server does (the e2e tier found each gap):
object names and labels, and DRA selectors' CEL."""

from __future__ import annotations

from eks_devices.core.knowledge import kube_validation
from eks_devices.offline import render

DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}


def _problems(doc: dict) -> list[str]:
    return render.problems(render.Rendered("x/y.yaml", doc), "1.36")


def test_a_valid_device_class_passes() -> None:
    assert _problems(DEVICE_CLASS) == []


def test_names_and_labels_are_checked_as_the_server_does() -> None:
    bad_name = {**DEVICE_CLASS, "metadata": {"name": "Not_A_Name"}}
    assert any("metadata.name" in p for p in _problems(bad_name))
    bad_label = {**DEVICE_CLASS, "metadata": {"name": "ok", "labels": {"eks-devices.io/pool": "bad value!"}}}
    assert any("metadata.labels" in p for p in _problems(bad_label))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a" * 64}}
    assert kube_validation.metadata_problems(namespace)
    assert kube_validation.metadata_problems({**namespace, "metadata": {"name": "a.b"}})  # a label, not a subdomain
    assert not kube_validation.metadata_problems({**DEVICE_CLASS, "metadata": {"name": "a.b"}})


def test_selector_cel_is_compiled() -> None:
    broken = {**DEVICE_CLASS, "spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]}}
    assert any(p.startswith("spec.selectors[0].cel.expression") for p in _problems(broken))
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {
                    "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": "nope("}}]}}]}}}}
    assert any("cel.expression" in p for p in _problems(template))


def test_karpenter_crd_fields_outside_the_crd_are_refused() -> None:
    from eks_devices.core.knowledge import crd_schemas

    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": {
        "template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "n"},
                              "requirements": []}}}}
    assert crd_schemas.validate(pool) == []
    assert crd_schemas.validate({**pool, "spec": {**pool["spec"], "notAField": 1}})
