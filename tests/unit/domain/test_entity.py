import math
from typing import Any
from uuid import uuid4

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from redstring.domain.blocking import blocking_keys_for
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.ids import EntityId
from redstring.domain.normalization import normalize_name
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity

UNSAFE = pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "lone-surrogate"])
#: Text an entity can hold: hypothesis already leaves out surrogates, so drop NUL.
storable_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))


def test_extraction_method_values_are_a_pinned_wire_format() -> None:
    assert {member.name: member.value for member in ExtractionMethod} == {
        "LLM": "llm",
        "PATTERN": "pattern",
        "MANUAL": "manual",
        "HYBRID": "hybrid",
    }


def test_extraction_method_parses_from_its_wire_value() -> None:
    assert make_entity(extraction_method="hybrid").extraction_method is ExtractionMethod.HYBRID


@pytest.mark.parametrize("name", ["", " ", "   ", "\t\n", "\u3000"])
def test_a_blank_name_is_rejected_with_a_value_error_naming_the_field(name: str) -> None:
    with pytest.raises(ValueError, match="name must not be blank"):
        make_entity(name=name)


@pytest.mark.parametrize("entity_type", ["", "  ", "\n"])
def test_a_blank_entity_type_is_rejected_with_a_value_error_naming_the_field(
    entity_type: str,
) -> None:
    with pytest.raises(ValueError, match="entity_type must not be blank"):
        make_entity(entity_type=entity_type)


def test_the_name_is_stored_exactly_as_given() -> None:
    entity = make_entity(name="  Ada   LOVELACE ")

    assert entity.name == "  Ada   LOVELACE "


@given(storable_text.filter(str.strip))
@example("Straße  Ünïcode")
@example(" Ada\tLovelace ")
def test_normalized_name_defaults_to_normalize_name_of_the_name(name: str) -> None:
    assert make_entity(name=name).normalized_name == normalize_name(name)


def test_an_explicit_normalized_name_overrides_the_default() -> None:
    entity = make_entity(name="Ada Lovelace", normalized_name="lovelace, ada")

    assert entity.normalized_name == "lovelace, ada"


@given(st.floats(min_value=0.0, max_value=1.0))
@example(0.0)
@example(1.0)
def test_a_confidence_on_zero_to_one_inclusive_is_accepted(confidence: float) -> None:
    assert make_entity(confidence=confidence).confidence == confidence


@given(st.one_of(st.floats(max_value=-1e-12), st.floats(min_value=1.0 + 1e-12)))
@example(-0.0001)
@example(1.0001)
@example(math.nan)
@example(math.inf)
@example(-math.inf)
def test_a_confidence_outside_zero_to_one_or_not_finite_is_rejected(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        make_entity(confidence=confidence)


@UNSAFE
@pytest.mark.parametrize(
    "field", ["name", "normalized_name", "entity_type", "description", "source_id", "model"]
)
def test_unstorable_text_is_rejected_in_every_string_field(field: str, bad: str) -> None:
    with pytest.raises(ValueError, match=field):
        make_entity(**{field: f"Ada{bad}Lovelace"})


@UNSAFE
def test_an_unstorable_name_names_the_name_field_in_its_own_message(bad: str) -> None:
    # pydantic's location line also says "name"; the message itself must too.
    with pytest.raises(ValueError, match=r"name contains"):
        make_entity(name=f"Ada{bad}")


@UNSAFE
@pytest.mark.parametrize(
    "properties",
    [
        lambda bad: {"note": f"x{bad}"},
        lambda bad: {f"k{bad}ey": "value"},
        lambda bad: {"tags": ["fine", ["deeper", f"x{bad}"]]},
        lambda bad: {"outer": {"inner": [{f"k{bad}": 1}]}},
    ],
    ids=["value", "key", "nested-list", "key-inside-list-inside-dict"],
)
def test_unstorable_text_anywhere_in_properties_is_rejected(properties: Any, bad: str) -> None:
    with pytest.raises(ValueError, match="properties"):
        make_entity(properties=properties(bad))


def test_unstorable_text_in_a_blocking_key_is_rejected() -> None:
    with pytest.raises(ValueError, match="blocking_keys"):
        make_entity(blocking_keys=frozenset({"p:ada\x00"}))


def test_a_paired_astral_character_is_storable() -> None:
    entity = make_entity(name="Ada 🧮", properties={"emoji": "🧮", "🧮": ["🧮"]})

    assert entity.name == "Ada 🧮"


def test_an_entity_is_frozen() -> None:
    entity = make_entity()

    with pytest.raises(ValidationError, match="frozen"):
        entity.name = "Charles Babbage"  # type: ignore[misc]


def test_an_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="nickname"):
        make_entity(nickname="Ada")


def test_an_unknown_extraction_method_is_rejected() -> None:
    with pytest.raises(ValueError, match="extraction_method"):
        make_entity(extraction_method="guessed")


def test_optional_fields_default_to_empty() -> None:
    entity = Entity(  # type: ignore[call-arg]  # normalized_name defaults in a before-validator
        id=EntityId(uuid4()),
        tenant_id=TENANT,
        name="Ada",
        entity_type="person",
        extraction_method=ExtractionMethod.LLM,
        confidence=0.5,
    )

    assert entity.description is None
    assert entity.source_id is None
    assert entity.model is None
    assert entity.properties == {}


def test_an_entity_constructed_without_blocking_keys_computes_them() -> None:
    """A hand-built entity must be blocked like an extracted one, not invisibly."""
    entity = Entity(  # type: ignore[call-arg]  # normalized_name defaults in a before-validator
        id=EntityId(uuid4()),
        tenant_id=TENANT,
        name="Müñoz Lovelace",
        entity_type="person",
        extraction_method=ExtractionMethod.MANUAL,
        confidence=1.0,
    )
    assert entity.blocking_keys == frozenset({"p:müñoz", "s:M524", "t:person"})
    assert entity.blocking_keys == blocking_keys_for(entity)


def test_blocking_keys_given_are_kept_including_none() -> None:
    """The extractor's keys win; `None` given is the explicit "not computed"."""
    fields: dict[str, Any] = {
        "id": EntityId(uuid4()),
        "tenant_id": TENANT,
        "name": "Ada",
        "entity_type": "person",
        "extraction_method": ExtractionMethod.MANUAL,
        "confidence": 1.0,
    }
    assert Entity(**fields, blocking_keys=frozenset({"p:x"})).blocking_keys == frozenset({"p:x"})
    assert Entity(**fields, blocking_keys=None).blocking_keys is None
    assert Entity.model_validate_json(Entity(**fields).model_dump_json()).blocking_keys == (
        frozenset({"p:ada", "s:A300", "t:person"})
    )


def test_the_factory_computes_blocking_keys_from_the_final_name_and_type() -> None:
    entity = make_entity(name="Charles Babbage", entity_type="Engineer")

    assert entity.blocking_keys == blocking_keys_for(entity)
    assert "t:engineer" in entity.blocking_keys


def test_the_factory_keeps_explicit_blocking_keys_including_none() -> None:
    assert make_entity(blocking_keys=None).blocking_keys is None
    assert make_entity(blocking_keys=frozenset({"p:x"})).blocking_keys == frozenset({"p:x"})


def test_the_factory_tenants_are_distinct_and_default_is_tenant() -> None:
    assert TENANT != OTHER_TENANT
    assert make_entity().tenant_id == TENANT
    assert make_entity(tenant_id=OTHER_TENANT).tenant_id == OTHER_TENANT


def test_blocking_keys_serialize_to_json_in_sorted_order_so_bytes_are_stable() -> None:
    """A frozenset iterates in hash order, which changes between processes."""
    entity = make_entity(blocking_keys=frozenset({"s:A341", "p:ada l", "t:person"}))
    assert '"blocking_keys":["p:ada l","s:A341","t:person"]' in entity.model_dump_json()
    assert Entity.model_validate_json(entity.model_dump_json()) == entity
