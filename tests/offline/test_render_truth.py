"""`render` writes only what is true: no id the mock engine invented, values known only after deploy
marked as such, selectors by tag, placement groups by their real name; and it owns its output folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from eks_devices import testing
from eks_devices.core.knowledge import crd_schemas
from eks_devices.core.manifests import nodes as nm
from eks_devices.core.names import SECURITY_GROUP_TAG
from eks_devices.offline import engine as offline
from eks_devices.offline import render
from support import engine, stacks
from support.cli import run as cli

STACKS = stacks.SHIPPED
# the ids the mock engine invents: an EC2 prefix and 16 hex digits (`engine.aws_id`), or `<name>-id`
MOCK_ID = re.compile("|".join(re.escape(p) for p in sorted(set(testing.ID_PREFIXES.values()))) + r"[0-9a-f]{16}\b")
NODE_CLASS_FOLDERS = ("nodeclass", "ec2nodeclass")


def rendered_files(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for stack in STACKS:
        folder = tmp_path_factory.mktemp(f"render-{stack}")
        result = cli("render", stack, "--out", str(folder))
        assert result.returncode == 0, result.stderr
        out[stack] = folder
    return out


@pytest.fixture(scope="module")
def recordings() -> dict[str, offline.Recording]:
    return {stack: engine.main(stacks.shipped(stack), stack=stack) for stack in STACKS}


@pytest.mark.parametrize("stack", STACKS)
def test_rendered_output_holds_no_mock_invented_value(renders: dict[str, Path],
                                                      recordings: dict[str, offline.Recording], stack: str) -> None:
    """Neither an EC2-shaped id nor any other value the mock engine made up (generated names, ARNs)."""
    files = rendered_files(renders[stack])
    assert files
    invented = {v for v in render.invented(recordings[stack]) if len(v) > 3}
    for path, text in files.items():
        assert not MOCK_ID.search(text), f"{path}: {MOCK_ID.search(text).group()}"  # type: ignore[union-attr]
        for doc in yaml.safe_load_all(text) if path.endswith(".yaml") else []:
            strings = re.findall(r"[^\s'\"]+", json.dumps(doc))
            assert not invented & {s.strip(",:{}[]") for s in strings}, path


@pytest.mark.parametrize("stack", [s for s in STACKS if stacks.shipped_plan(s).mode != "managed-node-groups"])
def test_node_classes_select_by_tag_and_mark_the_role(renders: dict[str, Path], stack: str) -> None:
    """Subnets and security groups by tag (the EFA group on EFA pools only), the node role as a value
    known after deploy, and the result still valid against the CRD schema."""
    plan = stacks.shipped_plan(stack)
    name = plan.spec.cluster.name
    classes = [yaml.safe_load(p.read_text()) for folder in NODE_CLASS_FOLDERS
               for p in sorted((renders[stack] / folder).glob("*.yaml"))]
    assert classes
    efa_classes = {nm.node_class_name(plan.mode, p) for p in plan.pools.values() if nm.uses_efa(p)}
    cluster_term = {"tags": {"karpenter.sh/discovery": name, SECURITY_GROUP_TAG: "cluster"}}
    efa_term = {"tags": {"karpenter.sh/discovery": name, SECURITY_GROUP_TAG: "efa"}}
    for obj in classes:
        spec = obj["spec"]
        expected = [cluster_term, efa_term] if obj["metadata"]["name"] in efa_classes else [cluster_term]
        assert spec["securityGroupSelectorTerms"] == expected, obj["metadata"]["name"]
        assert all("id" not in term for term in spec["subnetSelectorTerms"])
        assert spec["role"].startswith("<known after deploy: ")
        assert crd_schemas.validate({**obj, "spec": {**spec, "role": "some-role"}}) == []


@pytest.mark.parametrize(("mode", "pool"), [("auto-mode", "train-efa"), ("karpenter", "gpu-dra")])
def test_tagged_security_group_selectors_are_valid_in_both_modes(mode: str, pool: str) -> None:
    stack = "dev" if mode == "auto-mode" else "staging"
    plan = stacks.build(stacks.shipped(stack))
    facts = nm.ClusterFacts(cluster_name="ml", node_role_name="ml-node", discovery_tag="ml",
                            tagged_security_groups=True, placement_groups=((pool, f"ml-{pool}"),))
    for p in plan.pools.values():
        obj = nm.node_class(mode, p, facts)
        assert crd_schemas.validate(obj) == []
        groups = [t["tags"][SECURITY_GROUP_TAG] for t in obj["spec"]["securityGroupSelectorTerms"]]
        assert groups == (["cluster", "efa"] if nm.uses_efa(p) else ["cluster"])


@pytest.mark.parametrize(("stack", "pool"), [("dev", "train-efa"), ("staging", "gpu-dra")])
def test_placement_groups_keep_their_generated_name_and_render_marks_it(stack: str, pool: str) -> None:
    """A zone-pinned EFA pool's placement group keeps the name Pulumi generates (naming it would
    replace the groups of existing stacks under their instances); render writes it as known after deploy."""
    config = stacks.shipped(stack, {pool: {"availabilityZone": "us-west-2b"}}, claims=False)
    rec = engine.main(config, stack=stack)
    [group] = rec.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert "name" not in group.inputs
    items = render.marked(render.objects(rec), rec)
    selectors = [i.document["spec"]["placementGroupSelector"] for i in items
                 if i.path.startswith(NODE_CLASS_FOLDERS) and "placementGroupSelector" in i.document["spec"]]
    assert len(selectors) == 1 and selectors[0]["name"].startswith("<known after deploy: ")


def test_a_later_render_replaces_what_render_wrote(tmp_path: Path) -> None:
    out = tmp_path / "manifests"
    assert cli("render", "staging", "--out", str(out)).returncode == 0
    staging = set(rendered_files(out))
    assert render.MARKER in staging and any(p.startswith("ec2nodeclass/") for p in staging)
    (out / "README.md").write_text("mine\n")  # not render's: it stays
    result = cli("render", "dev", "--out", str(out))
    assert result.returncode == 0, result.stderr
    dev = set(rendered_files(out))
    assert not any(p.startswith(("ec2nodeclass/", "helm-values/")) for p in dev)  # staging's files are gone
    assert not [p for p in out.iterdir() if p.is_dir() and not any(p.iterdir())]  # nor their empty folders
    assert "README.md" in dev and any(p.startswith("nodeclass/") for p in dev)
    listed = json.loads((out / render.MARKER).read_text())["written"]
    assert sorted(dev - {render.MARKER, "README.md"}) == sorted(listed)


@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_render_did_not_write_is_refused(tmp_path: Path, as_json: bool) -> None:
    (tmp_path / "notes.txt").write_text("keep me\n")
    result = cli("render", "dev", "--out", str(tmp_path), *(["--json"] if as_json else []))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    if as_json:
        assert "not written by render" in json.loads(result.stdout)["error"]
    else:
        assert len(result.stderr.strip().splitlines()) == 1 and "not written by render" in result.stderr
    assert rendered_files(tmp_path) == {"notes.txt": "keep me\n"}


def test_out_naming_a_file_is_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "manifests.yaml"
    target.write_text("x: 1\n")
    result = cli("render", "dev", "--out", str(target))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "is a file" in result.stderr
    assert target.read_text() == "x: 1\n"
