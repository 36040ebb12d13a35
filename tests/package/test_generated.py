"""The configuration has one source, its models: `config_types.py`, `components/schema.json` and
`schemas/stack.schema.json` are generated from them (`python -m eks_devices.package.generate`),
each says so, and each committed copy is byte for byte what the generator writes now."""

from __future__ import annotations

import json
import typing
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from eks_devices import config_types
from eks_devices.core import vocabulary
from eks_devices.core.config.schema import GENERATED_NOTE
from eks_devices.core.config.stack import Spec
from eks_devices.package import generate
from support.stacks import ROOT


@pytest.mark.parametrize("path", list(generate.GENERATED), ids=lambda p: p.name)
def test_each_committed_file_is_what_the_generator_writes(path: Path) -> None:
    assert path.read_text() == generate.GENERATED[path](), (
        f"{path.relative_to(ROOT)} is stale: run `python -m eks_devices.package.generate`")


def test_each_generated_file_says_it_is_generated_and_by_what() -> None:
    assert generate.TYPES_FILE.read_text().splitlines()[0] == f"# {GENERATED_NOTE}"
    assert json.loads(generate.PACKAGE_SCHEMA.read_text())["attribution"] == GENERATED_NOTE
    assert json.loads(generate.STACK_SCHEMA.read_text())["$comment"] == GENERATED_NOTE
    assert "python -m eks_devices.package.generate" in GENERATED_NOTE


def test_check_names_a_stale_file_and_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "stack.schema.json"
    stale.write_text(generate.STACK_SCHEMA.read_text().replace("Node pools by name.", "Pools."))
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    monkeypatch.setattr(generate, "GENERATED", {stale: generate.GENERATED[generate.STACK_SCHEMA]})
    assert generate.main(["--check"]) == 1
    assert "stack.schema.json is stale" in capsys.readouterr().err
    assert generate.main([]) == 0 and generate.main(["--check"]) == 0
    assert stale.read_text() == generate.STACK_SCHEMA.read_text()


def test_the_typed_arguments_are_the_spec_field_for_field() -> None:
    hints = typing.get_type_hints(config_types.PlatformArgs)
    assert set(hints) == {"region", "profile", "network", "cluster", "node_pools", "helm_values", "chart_versions",
                          "device_classes", "claims", "digests"}
    assert len(hints) == len(Spec.model_fields)
    assert config_types.PlatformArgs.__required_keys__ == frozenset({"cluster"})
    pool = config_types.NodePoolConfig
    assert pool.__required_keys__ == frozenset({"instance_types"})
    assert set(typing.get_type_hints(pool)) == set(Spec.model_fields["node_pools"].annotation.__args__[1].model_fields)


@pytest.mark.parametrize("word", ["Mode", "ManagerChoice", "Provisioning", "Capacity", "AmiFamily", "NatGateways",
                                  "SubnetKind", "EfaAlignment", "InterfaceType", "GpuSharingStrategy", "TaintEffect",
                                  "LogType"])
def test_each_enum_is_a_vocabulary_word(word: str) -> None:
    enum = getattr(config_types, generate.TYPE_NAMES.get(word, word))
    assert issubclass(enum, StrEnum)
    assert [m.value for m in enum] == list(typing.get_args(getattr(vocabulary, word)))
    schema = json.loads(generate.PACKAGE_SCHEMA.read_text())["types"][f"eks-devices:index:{enum.__name__}"]
    assert [v["value"] for v in schema["enum"]] == [m.value for m in enum]


def test_member_descriptions_come_from_the_vocabulary_docstrings() -> None:
    schema = json.loads(generate.PACKAGE_SCHEMA.read_text())["types"]["eks-devices:index:DeviceManager"]
    described = {v["value"]: v.get("description") for v in schema["enum"]}
    assert described["inferred"].startswith("Dynamic Auto Mode pools only")
    assert schema["description"] == "Which software manages a device family on a pool's nodes."


# --- how a model becomes a type ------------------------------------------------------------------


class Toy(BaseModel):
    """A toy section (its fields' docstrings are read from this file, as the configuration models' are)."""

    mode: vocabulary.Mode
    """The toy's mode."""
    sides: Literal["left", "right"] = "left"
    retention: Literal[1, 3, 7] = 1
    zones: int | list[str] = 3
    """Where it runs."""
    charts: dict[vocabulary.ChartKey, str] = Field(default_factory=dict)
    note: str | None = None


def test_a_model_becomes_a_typed_dict_with_enums_and_split_counts() -> None:
    gen = generate.Generator()
    assert gen.model(Toy) == "ToyConfig"
    text = "\n".join(gen.blocks["ToyConfig"])
    assert '    mode: Mode\n    """The toy\'s mode."""' in text
    assert "    sides: NotRequired[str]\n    \"\"\"One of left, right.\"\"\"" in text
    assert "    retention: NotRequired[int]" in text
    assert "    zone_count: NotRequired[int]\n    \"\"\"Where it runs. This key takes the count" in text
    assert "    zones: NotRequired[list[str]]" in text
    assert "    charts: NotRequired[dict[str, str]]" in text and "ChartKey" not in gen.blocks  # text keys, no enum
    assert "    note: NotRequired[str]" in text
    assert gen.enums == ["Mode"]


class Unreadable(BaseModel):
    shape: Toy | int


def test_a_field_the_analyzer_cannot_read_is_an_error_naming_it() -> None:
    with pytest.raises(generate.GenerateError, match=r"Unreadable\.shape: .*FREE_FORM"):
        generate.Generator().model(Unreadable)


def test_a_documented_value_the_word_lacks_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = generate.Generator()
    gen.docs["Mode"] = "How the cluster gets compute.\n\n- fargate: not a mode"
    with pytest.raises(generate.GenerateError, match="fargate"):
        gen.enum(vocabulary.Mode)


def test_free_form_fields_stay_maps_of_any_value() -> None:
    assert typing.get_type_hints(config_types.PlatformArgs)["claims"] == dict[str, dict[str, Any]]
