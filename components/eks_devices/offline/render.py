"""`render`: every Kubernetes object the program would apply, as validated YAML, one folder per kind.

The objects come from the recorded run of the real program (`components/preview.py`), so what is
rendered is exactly what `pulumi up` would send: DeviceClasses, NodePools, NodeClasses /
EC2NodeClasses, claims and claim templates, namespaces, and each Helm release's values. Built-in
kinds are validated against the Kubernetes JSON schema of the cluster's version
(kubernetes-validate, strict), custom resources against the structural schemas of
`components/crd_schemas.py`; nothing is written unless everything validates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from eks_devices.core.knowledge import crd_schemas
from eks_devices.offline import engine as offline

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
SCHEMA_VERSIONS = ("1.34", "1.35", "1.36", "1.37")  # the Kubernetes schemas objects are checked against


@dataclass(frozen=True)
class Rendered:
    """One file to write: its path under the output folder and its document."""

    path: str
    document: dict[str, Any]
    header: str = ""


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _manifest(inputs: dict[str, Any]) -> dict[str, Any]:
    """A Kubernetes object from a resource's recorded inputs: apiVersion, kind, metadata first, the
    rest sorted, so two renders of one stack are byte-identical."""
    ordered = {k: _sorted(inputs[k]) for k in ("apiVersion", "kind", "metadata") if k in inputs}
    ordered.update({k: _sorted(v) for k, v in sorted(inputs.items()) if k not in ordered})
    return ordered


def objects(recording: offline.Recording) -> list[Rendered]:
    """Every Kubernetes object and Helm values file the recorded program would apply."""
    out: list[Rendered] = []
    for r in recording.resources:
        if r.type == HELM_RELEASE:
            values = _sorted(r.inputs.get("values") or {})
            header = (f"# Helm release {r.inputs.get('name')} of chart {r.inputs.get('chart')} "
                      f"{r.inputs.get('version')} in namespace {r.inputs.get('namespace')}\n")
            out.append(Rendered(f"helm-values/{r.inputs.get('name') or r.name}.yaml", values, header))
        elif r.type.startswith("kubernetes:") and r.custom:
            obj = _manifest(r.inputs)
            meta = obj.get("metadata") or {}
            name = meta.get("name") or r.name
            prefix = f"{meta['namespace']}." if meta.get("namespace") else ""
            out.append(Rendered(f"{str(obj.get('kind', 'Unknown')).lower()}/{prefix}{name}.yaml", obj))
    return sorted(out, key=lambda item: item.path)


def _builtin(api_version: str) -> bool:
    group = api_version.split("/")[0] if "/" in api_version else ""
    return group == "" or group.endswith(".k8s.io") or group in ("apps", "batch", "policy", "autoscaling")


def problems(item: Rendered, version: str) -> list[str]:
    """Schema problems of one rendered object at a Kubernetes version (`"1.36"`)."""
    if item.path.startswith("helm-values/"):
        return [] if isinstance(item.document, dict) else ["values are not a mapping"]
    import kubernetes_validate  # loads its schemas' library only when rendering

    obj = item.document
    if _builtin(str(obj.get("apiVersion", ""))):
        try:
            kubernetes_validate.validate(obj, f"{version}.0", strict=True)
        except kubernetes_validate.ValidationError as exc:
            return [f"{'.'.join(str(p) for p in exc.path) or '(object)'}: {exc.message}"]
        except kubernetes_validate.SchemaNotFoundError as exc:
            return [str(exc)]
        return []
    return crd_schemas.validate(obj)


def schema_version(kubernetes: tuple[int, int]) -> str:
    """The schema version to validate against: the cluster's, clamped to the schemas we check."""
    wanted = f"{kubernetes[0]}.{kubernetes[1]}"
    if wanted in SCHEMA_VERSIONS:
        return wanted
    return SCHEMA_VERSIONS[0] if kubernetes < (1, 34) else SCHEMA_VERSIONS[-1]


def write(items: list[Rendered], out_dir: Path) -> list[Path]:
    written = []
    for item in items:
        path = out_dir / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item.header + yaml.safe_dump(item.document, sort_keys=False, default_flow_style=False))
        written.append(path)
    return written
