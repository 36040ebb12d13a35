"""Writes the files generated from the configuration models (`core/config/`), the one source of the
configuration's shape:

- `components/eks_devices/config_types.py`: the models as the types Pulumi's component analyzer
  reads (`PlatformArgs` and its sections as TypedDicts, the vocabulary as StrEnums);
- `components/schema.json`: the component package's schema, which the analyzer infers from them;
- `schemas/stack.schema.json`: the JSON Schema of a stack file (`core/config/schema.py`).

    python -m eks_devices.package.generate           # rewrite the three files
    python -m eks_devices.package.generate --check   # exit 1 naming each stale file

`tests/package/test_generated.py` regenerates them and compares byte for byte.

How a model becomes a type (pulumi 3.272, `pulumi/provider/experimental/analyzer.py`, takes no
`Literal`, no union but `X | None`, only text dict keys): a model is a TypedDict named `<Model>Config`
(`TYPE_NAMES` where the package's public name differs), a field with a default is `NotRequired`, a
named `Literal` of text from the vocabulary is a StrEnum (its docstring's `- value: meaning` lines
document the members), an unnamed one is text and a `Literal` of numbers an integer, dict keys are
text, `int | list[str]` is split in two keys (the count under `…Count`, `keys.count_key`), and
`FREE_FORM` fields are maps of any value. Keys are the fields' snake_case names (the wire carries
their camelCase aliases) and the Spec's fields are named as `Platform` takes them (`profile`).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from eks_devices.core import vocabulary
from eks_devices.core.config import schema as stack_schema
from eks_devices.core.config.base import description
from eks_devices.core.config.keys import count_key, property_name, snake_case, stack_key
from eks_devices.core.config.schema import GENERATED_NOTE, GENERATOR
from eks_devices.core.config.stack import Spec
from eks_devices.core.docstrings import module_docs

COMPONENTS = Path(__file__).resolve().parents[2]
ROOT = COMPONENTS.parent
TYPES_FILE = COMPONENTS / "eks_devices" / "config_types.py"
PACKAGE_SCHEMA = COMPONENTS / "schema.json"
STACK_SCHEMA = ROOT / "schemas" / "stack.schema.json"

# The package's public type names (its SDKs' class names) where they are not `<Model>Config`.
TYPE_NAMES = {"Spec": "PlatformArgs", "Devices": "DeviceManagers", "ExtraDeviceClass": "DeviceClassConfig",
              "ManagerChoice": "DeviceManager"}
# Fields passed through as maps of any value: a claim is one of several shapes (a template or a
# claim; a count or `all`) that the analyzer's types cannot state; `parse` checks it.
FREE_FORM = {(Spec, "claims")}
PLATFORM_ARGS_DOC = ("The stack configuration as arguments: every `eks-devices:<key>` of a stack file, plus the\n"
                     "region and profile. All plain: the device plan decides at construct time which resources\n"
                     "exist. Keys are snake_case in Python; the wire and every problem path spell them camelCase.")


class GenerateError(Exception):
    """A model field the generator cannot express as a type the analyzer reads."""


def vocabulary_words() -> dict[Any, str]:
    """Each named `Literal` of text in the vocabulary → its name."""
    return {value: name for name, value in vars(vocabulary).items()
            if get_origin(value) is Literal and all(isinstance(a, str) for a in get_args(value))}


def member_name(value: str) -> str:
    """`auto-mode` → `AUTO_MODE`, `controllerManager` → `CONTROLLER_MANAGER`."""
    return snake_case(value.replace("-", "_")).upper()


def docstring(text: str | None, indent: str) -> list[str]:
    """`text` as a docstring at `indent`, its lines wrapped to the project's 120 columns (nothing when
    there is none)."""
    if not text:
        return []
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    width = 120 - len(indent) - 6
    lines = [part for line in body.splitlines() for part in (textwrap.wrap(line, width) or [""])]
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *(f"{indent}{line}" if line else "" for line in lines[1:]), f'{indent}"""']


class Generator:
    """Collects the enums and TypedDicts reachable from `Spec`, each written once, dependencies first."""

    def __init__(self) -> None:
        self.words = vocabulary_words()
        self.docs = module_docs(vocabulary)
        self.blocks: dict[str, list[str]] = {}
        self.enums: list[str] = []
        self.dicts: list[str] = []

    def name(self, python_name: str, config_suffix: bool) -> str:
        return TYPE_NAMES.get(python_name) or (f"{python_name}Config" if config_suffix else python_name)

    def enum(self, literal: Any) -> str:
        word = self.words[literal]
        name = self.name(word, config_suffix=False)
        if name not in self.blocks:
            doc, _, bullets = self.docs.get(word, "").partition("\n\n- ")
            members = {}
            for line in (f"- {bullets}".splitlines() if bullets else []):
                value, _, meaning = line.removeprefix("- ").partition(": ")
                members[value] = meaning
            unknown = set(members) - set(get_args(literal))
            if unknown:
                raise GenerateError(f"vocabulary.{word}: documents values it does not have: {sorted(unknown)}")
            lines = [f"class {name}(StrEnum):", *docstring(doc, "    "), ""]
            for value in get_args(literal):
                lines.append(f"    {member_name(value)} = {json.dumps(value)}")
                lines.extend(docstring(members.get(value), "    "))
            self.blocks[name] = lines
            self.enums.append(name)
        return name

    def annotation(self, tp: Any, where: str, free: bool = False) -> str:
        """The analyzer-readable annotation for a model field's type."""
        origin, args = get_origin(tp), get_args(tp)
        if tp is Any:
            return "Any"
        if tp in (str, int, bool, float):
            return tp.__name__
        if origin is typing.Annotated:  # a validated type (a catalogued instance type): its wire type
            return self.annotation(args[0], where, free)
        if origin is Literal:
            if tp in self.words:
                return self.enum(tp)
            if all(isinstance(a, bool) for a in args):
                return "bool"
            if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
                return "int"
            if all(isinstance(a, str) for a in args):
                return "str"
        if origin in (typing.Union, types.UnionType):
            rest = [a for a in args if a is not type(None)]
            if len(rest) == 1:
                return self.annotation(rest[0], where, free)
        if origin is list:
            return f"list[{self.annotation(args[0], where, free)}]"
        if origin is dict:
            key = args[0]
            if not (key is str or (get_origin(key) is Literal and all(isinstance(a, str) for a in get_args(key)))):
                raise GenerateError(f"{where}: dict keys must be text, got {key}")
            return f"dict[str, {self.annotation(args[1], where, free)}]"
        if inspect.isclass(tp) and issubclass(tp, BaseModel):
            return "dict[str, Any]" if free else self.model(tp)
        raise GenerateError(f"{where}: {tp} has no type the component analyzer reads; give the field "
                            "a type of text, numbers, booleans, vocabulary words, lists, text-keyed maps "
                            "or models, or list it in FREE_FORM")

    def fields(self, model: type[BaseModel], name: str, field: FieldInfo) -> list[tuple[str, str, bool, str]]:
        """(key, annotation, required, description) for one model field: two for `int | list[str]`."""
        where = f"{model.__name__}.{name}"
        key = snake_case(property_name(stack_key(name))) if model is Spec else name
        required = field.is_required()
        doc = description(model, name) or ""
        args = [a for a in get_args(field.annotation) if a is not type(None)]
        if get_origin(field.annotation) in (typing.Union, types.UnionType) and set(args) == {int, list[str]}:
            counted = f"{doc} This key takes the count; `{key}` the names."
            return [(count_key(key), "int", False, counted.strip()), (key, "list[str]", False,
                                                                     f"{doc} This key takes the names.".strip())]
        annotation = self.annotation(field.annotation, where, free=(model, name) in FREE_FORM)
        if get_origin(field.annotation) is Literal and annotation == "str":
            accepted = ", ".join(get_args(field.annotation))
            doc = f"{doc} One of {accepted}." if doc else f"One of {accepted}."
        return [(key, annotation, required, doc)]

    def model(self, model: type[BaseModel]) -> str:
        name = self.name(model.__name__, config_suffix=True)
        if name in self.blocks:
            return name
        self.blocks[name] = []  # placeholder: a model is written after the types its fields use
        doc = PLATFORM_ARGS_DOC if model is Spec else inspect.cleandoc(model.__doc__ or "")
        lines = [f"class {name}(TypedDict):", *docstring(doc, "    "), ""]
        for field_name, field in model.model_fields.items():
            for key, annotation, required, field_doc in self.fields(model, field_name, field):
                lines.append(f"    {key}: {annotation if required else f'NotRequired[{annotation}]'}")
                lines.extend(docstring(field_doc, "    "))
        self.blocks[name] = lines
        self.dicts.append(name)
        return name

    def render(self) -> str:
        self.model(Spec)
        header = [
            f"# {GENERATED_NOTE}",
            '"""The stack configuration as typed arguments, shaped for Pulumi\'s component analyzer: `PlatformArgs`',
            "and its sections as TypedDicts, the configuration's words as StrEnums. `Platform` (Python and",
            "multi-language) takes `PlatformArgs`; the package schema (`components/schema.json`) is inferred",
            'from these types."""',
            "",
            "# No `from __future__ import annotations`: the analyzer reads these annotations at run time.",
            "",
            "from enum import StrEnum",
            "from typing import Any, NotRequired, TypedDict",
        ]
        body = ["\n".join(self.blocks[name]) for name in [*self.enums, *self.dicts]]
        return "\n".join(header) + "\n\n\n" + "\n\n\n".join(body) + "\n"


def config_types() -> str:
    """The text of `config_types.py`."""
    return Generator().render()


def package_schema() -> str:
    """The text of `components/schema.json`, inferred from `config_types.py` as it is on disk (in a
    fresh interpreter, so a file rewritten by this run is the one read)."""
    code = "from eks_devices.package.provider import schema_text; import sys; sys.stdout.write(schema_text())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env=None, cwd=COMPONENTS)
    if done.returncode:
        raise GenerateError(f"the package schema could not be inferred:\n{done.stderr}")
    return done.stdout


GENERATED: dict[Path, Callable[[], str]] = {TYPES_FILE: config_types, PACKAGE_SCHEMA: package_schema,
                                            STACK_SCHEMA: stack_schema.render}


def stale() -> list[Path]:
    """The generated files whose committed text differs from what the models give now."""
    return [path for path, make in GENERATED.items() if not path.exists() or path.read_text() != make()]


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    if check:
        old = stale()
        for path in old:
            print(f"{path.relative_to(ROOT)} is stale: run `{GENERATOR}`", file=sys.stderr)
        return 1 if old else 0
    for path, make in GENERATED.items():  # in order: the package schema is inferred from the written types
        text = make()
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
