"""Docstrings under assignments, read from source when a schema is generated."""

from __future__ import annotations

from pydantic import BaseModel, Field, create_model

from eks_devices.core import docstrings, vocabulary
from eks_devices.core.config.base import Model, description
from eks_devices.core.config.stack import Cluster, Spec


class Parent(BaseModel):
    """Not a field's docstring."""

    kept: int = 0
    """Said once, in the parent."""
    redefined: int = 0
    """The parent's word."""
    bare: int = 0

    def method(self) -> None:
        inner: int = 1
        """Inside a function: not the class's."""
        del inner


class Child(Parent):
    redefined: int = 1
    explicit: int = Field(default=0, description="Given by Field.")
    """Loses to the Field's description."""


class Plain:
    word = "x"
    """A plain assignment's."""


Made = create_model("Made", __base__=Parent, made=(int, 0))


def test_a_class_body_documents_its_own_annotated_and_plain_assignments() -> None:
    assert docstrings.class_docs(Parent) == {"kept": "Said once, in the parent.", "redefined": "The parent's word."}
    assert docstrings.class_docs(Plain) == {"word": "A plain assignment's."}


def test_a_field_is_described_where_it_is_declared() -> None:
    assert docstrings.attribute_doc(Child, "kept") == "Said once, in the parent."
    assert docstrings.attribute_doc(Child, "redefined") is None  # redeclared without a docstring: as pydantic has it
    assert docstrings.attribute_doc(Child, "bare") is None
    assert docstrings.attribute_doc(Child, "missing") is None


def test_a_fields_own_description_wins() -> None:
    assert description(Child, "explicit") == "Given by Field."
    assert description(Child, "kept") == "Said once, in the parent."


def test_a_class_no_class_statement_made_has_no_docstrings_of_its_own() -> None:
    assert docstrings.class_docs(Made) == {}
    assert docstrings.attribute_doc(Made, "made") is None
    assert docstrings.attribute_doc(Made, "kept") == "Said once, in the parent."


def test_module_docs_read_top_level_names() -> None:
    docs = docstrings.module_docs(vocabulary)
    assert docs["Mode"].startswith("How the cluster")


def test_configuration_models_are_described_from_source_not_at_import() -> None:
    """pydantic's `use_attribute_docstrings` parsed every model's source when it was imported (~60 ms
    of each command); the descriptions are read when a schema is generated instead."""
    assert not Model.model_config.get("use_attribute_docstrings")
    documented = [name for name in Cluster.model_fields if docstrings.attribute_doc(Cluster, name)]
    assert documented
    assert all(Cluster.model_fields[name].description is None for name in documented)
    assert all(description(Cluster, name) for name in documented)
    assert description(Spec, "cluster") == docstrings.class_docs(Spec)["cluster"]
