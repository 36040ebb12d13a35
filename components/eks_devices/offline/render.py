"""`render`: every Kubernetes object the program would apply, as validated YAML, one folder per kind.

The objects come from the recorded run of the real program (`eks_devices.offline.preview`), so what is
rendered is exactly what `pulumi up` would send: DeviceClasses, NodePools, NodeClasses /
EC2NodeClasses, claims and claim templates, namespaces, and each Helm release's values. Built-in
kinds are validated against the Kubernetes JSON schema of the cluster's version
(kubernetes-validate, strict), custom resources against the structural schemas of
`eks_devices.core.knowledge.crd_schemas`; nothing is written unless everything validates.

Only what is true is written. Subnets and security groups are selected by tag and placement groups
have names derived from cluster and pool, so most of a NodeClass is known before deploy; a value the
mock engine had to invent (an id, an ARN, a generated physical name such as a node role's, which AWS
gets with a random suffix) is written as `<known after deploy: ...>`, never as the invented value.
Objects are validated as the engine would send them, before the placeholders go in.

Render owns its output folder: it records what it wrote in `.eks-devices-render`, removes exactly
those files on the next render, and refuses a non-empty folder without that marker.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from eks_devices.core import cel
from eks_devices.core.knowledge import crd_schemas, kube_validation
from eks_devices.offline import engine as offline

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
SCHEMA_VERSIONS = ("1.34", "1.35", "1.36", "1.37")  # the Kubernetes schemas objects are checked against
MARKER = ".eks-devices-render"  # in an output folder: the files the last render wrote there


class OutputFolderError(ValueError):
    """The output folder cannot be rendered into (a file, or a folder render did not write)."""


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


def placeholder(what: str) -> str:
    return f"<known after deploy: {what}>"


def invented(recording: offline.Recording) -> dict[str, str]:
    """Each value the mock engine made up (an output the program did not give as that input: ids,
    ARNs, generated names), mapped to its placeholder."""
    out: dict[str, str] = {}
    for r in recording.resources:
        for key, value in r.outputs.items():
            if isinstance(value, str) and value and r.inputs.get(key) != value:
                out.setdefault(value, placeholder(f"{key} of {r.type} {r.name}"))
    return out


def _mark(value: Any, unknown: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _mark(v, unknown) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark(v, unknown) for v in value]
    if isinstance(value, str):
        return unknown.get(value, value)
    return value


def marked(items: list[Rendered], recording: offline.Recording) -> list[Rendered]:
    """`items` with every value the mock engine invented replaced by its placeholder."""
    unknown = invented(recording)
    return [Rendered(i.path, _mark(i.document, unknown), i.header) for i in items]


def objects(recording: offline.Recording) -> list[Rendered]:
    """Every Kubernetes object and Helm values file the recorded program would apply, as the engine
    would receive them (values known only after deploy are the mock engine's: see `marked`)."""
    out: list[Rendered] = []
    for r in recording.resources:
        if r.type == HELM_RELEASE:
            values = _sorted(r.inputs.get("values") or {})
            header = (f"# Helm release {r.inputs.get('name')} of chart {r.inputs.get('chart')} "
                      f"{r.inputs.get('version')} in namespace {r.inputs.get('namespace')}\n")
            out.append(Rendered(f"helm-values/{r.inputs.get('name') or r.name}.yaml", values, header))
        elif r.type.startswith("kubernetes:") and r.custom and not r.type.endswith("Patch"):
            # (a `…Patch` changes part of an object the toolkit does not own, aws-node: not a manifest to apply)
            obj = _manifest(r.inputs)
            meta = obj.get("metadata") or {}
            name = meta.get("name") or r.name
            prefix = f"{meta['namespace']}." if meta.get("namespace") else ""
            out.append(Rendered(f"{str(obj.get('kind', 'Unknown')).lower()}/{prefix}{name}.yaml", obj))
    return sorted(out, key=lambda item: item.path)


def _builtin(api_version: str) -> bool:
    group = api_version.split("/")[0] if "/" in api_version else ""
    return group == "" or group.endswith(".k8s.io") or group in ("apps", "batch", "policy", "autoscaling")


def _cel_expressions(node: Any, at: str = "") -> list[tuple[str, str]]:
    """Every `cel.expression` under a DRA object, with its path."""
    out: list[tuple[str, str]] = []
    if isinstance(node, dict):
        cel_node = node.get("cel")
        if isinstance(cel_node, dict) and isinstance(cel_node.get("expression"), str):
            out.append((f"{at}.cel.expression".lstrip("."), cel_node["expression"]))
        for key, value in node.items():
            out += _cel_expressions(value, f"{at}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _cel_expressions(value, f"{at}[{i}]")
    return out


def problems(item: Rendered, version: str) -> list[str]:
    """Schema problems of one rendered object at a Kubernetes version (`"1.36"`): the kind's schema, and
    what the API server checks beyond it (names and labels; DRA selectors' CEL, which it compiles)."""
    if item.path.startswith("helm-values/"):
        return [] if isinstance(item.document, dict) else ["values are not a mapping"]
    import kubernetes_validate  # loads its schemas' library only when rendering

    obj = item.document
    if not _builtin(str(obj.get("apiVersion", ""))):
        return crd_schemas.validate(obj)
    found = [f"{at}: {why}" for at, why in kube_validation.metadata_problems(obj)]
    try:
        kubernetes_validate.validate(obj, f"{version}.0", strict=True)
    except kubernetes_validate.ValidationError as exc:
        found.append(f"{'.'.join(str(p) for p in exc.path) or '(object)'}: {exc.message}")
    except kubernetes_validate.SchemaNotFoundError as exc:
        found.append(str(exc))
    if str(obj.get("apiVersion", "")).startswith("resource.k8s.io/"):
        for at, expression in _cel_expressions(obj.get("spec")):
            try:
                cel.compile_expression(expression)
            except cel.CelError as exc:
                found.append(f"spec.{at}: {exc}")
    return found


def schema_version(kubernetes: tuple[int, int]) -> str:
    """The schema version to validate against: the cluster's, clamped to the schemas we check."""
    wanted = f"{kubernetes[0]}.{kubernetes[1]}"
    if wanted in SCHEMA_VERSIONS:
        return wanted
    return SCHEMA_VERSIONS[0] if kubernetes < (1, 34) else SCHEMA_VERSIONS[-1]


def _owned(out_dir: Path) -> list[str]:
    """The files a previous render wrote into `out_dir` (relative paths); [] for a new or empty
    folder. OutputFolderError for a file, or for a non-empty folder render did not write."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputFolderError(f"--out {out_dir} is a file; give a folder")
    if not out_dir.exists() or not any(out_dir.iterdir()):
        return []
    marker = out_dir / MARKER
    if not marker.is_file():
        raise OutputFolderError(f"--out {out_dir} is not empty and was not written by render "
                                f"(no {MARKER}); give an empty or new folder")
    try:
        listed = json.loads(marker.read_text()).get("written", [])
    except (ValueError, AttributeError):
        raise OutputFolderError(f"--out {out_dir}: {MARKER} is not render's; give an empty or new folder") from None
    return [p for p in listed if isinstance(p, str)]


def check_out_dir(out_dir: Path) -> None:
    """OutputFolderError unless render may write into `out_dir`."""
    _owned(out_dir)


def _clear(out_dir: Path, owned: list[str]) -> None:
    """Remove the files a previous render wrote (only those, inside `out_dir`), and the folders that leaves empty."""
    root = out_dir.resolve()
    folders = set()
    for rel in owned:
        path = (out_dir / rel).resolve()
        if root not in path.parents or not path.is_file():
            continue
        path.unlink()
        folders.update(p for p in path.parents if root in p.parents)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def write(items: list[Rendered], out_dir: Path) -> list[Path]:
    """Write `items` into `out_dir`, replacing what an earlier render wrote there."""
    _clear(out_dir, _owned(out_dir))
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for item in items:
        path = out_dir / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item.header + yaml.safe_dump(item.document, sort_keys=False, default_flow_style=False))
        written.append(path)
    (out_dir / MARKER).write_text(json.dumps({"written": sorted(i.path for i in items)}, indent=1) + "\n")
    return written
