import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from redstring.domain.entity import ExtractionMethod
from redstring.domain.relationship import Relationship
from redstring.testing.factories import TENANT, make_entity, make_relationship

UNSAFE = pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "lone-surrogate"])


def edge(**overrides: Any) -> Relationship:
    return make_relationship(make_entity(name="Ada"), make_entity(name="Babbage"), **overrides)


def test_a_relationship_joins_its_endpoints_in_the_source_tenant() -> None:
    ada, babbage = make_entity(name="Ada"), make_entity(name="Babbage")

    relationship = make_relationship(ada, babbage, relationship_type="worked_with")

    assert relationship.source_entity_id == ada.id
    assert relationship.target_entity_id == babbage.id
    assert relationship.tenant_id == TENANT
    assert relationship.relationship_type == "worked_with"


def test_optional_fields_have_documented_defaults() -> None:
    ada, babbage = make_entity(), make_entity()
    relationship = Relationship(
        id=make_relationship(ada, babbage).id,
        tenant_id=TENANT,
        source_entity_id=ada.id,
        target_entity_id=babbage.id,
        relationship_type="knows",
    )

    assert relationship.extraction_method is ExtractionMethod.LLM
    assert relationship.confidence == 1.0
    assert relationship.properties == {}
    assert relationship.description is None
    assert relationship.source_id is None
    assert relationship.model is None


@pytest.mark.parametrize("relationship_type", ["", " ", "\t\n"])
def test_a_blank_relationship_type_is_rejected_with_a_value_error_naming_it(
    relationship_type: str,
) -> None:
    with pytest.raises(ValueError, match="relationship_type must not be blank"):
        edge(relationship_type=relationship_type)


@given(st.floats(min_value=0.0, max_value=1.0))
@example(0.0)
@example(1.0)
def test_a_confidence_on_zero_to_one_inclusive_is_accepted(confidence: float) -> None:
    assert edge(confidence=confidence).confidence == confidence


@given(st.one_of(st.floats(max_value=-1e-12), st.floats(min_value=1.0 + 1e-12)))
@example(-0.0001)
@example(1.0001)
@example(math.nan)
@example(math.inf)
def test_a_confidence_outside_zero_to_one_or_not_finite_is_rejected(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        edge(confidence=confidence)


@UNSAFE
@pytest.mark.parametrize("field", ["relationship_type", "description", "source_id", "model"])
def test_unstorable_text_is_rejected_in_every_string_field(field: str, bad: str) -> None:
    with pytest.raises(ValueError, match=field):
        edge(**{field: f"x{bad}y"})


@UNSAFE
@pytest.mark.parametrize(
    "properties",
    [
        lambda bad: {"since": f"18{bad}33"},
        lambda bad: {f"si{bad}nce": 1833},
        lambda bad: {"letters": [1, ["deep", f"x{bad}"]]},
    ],
    ids=["value", "key", "nested-list"],
)
def test_unstorable_text_anywhere_in_properties_is_rejected(properties: Any, bad: str) -> None:
    with pytest.raises(ValueError, match="properties"):
        edge(properties=properties(bad))


def test_a_relationship_is_frozen() -> None:
    relationship = edge()

    with pytest.raises(ValidationError, match="frozen"):
        relationship.relationship_type = "married_to"  # type: ignore[misc]


def test_an_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="weight"):
        edge(weight=3)
