"""Mapping a model's answer onto entities: deterministic ids, bad rows dropped and counted."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid5

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.blocking import blocking_keys_for
from redstring.domain.entity import ExtractionMethod
from redstring.domain.ids import EntityId, SourceId
from redstring.extraction.mapping import (
    EXTRACTION_ID_NAMESPACE,
    entity_id_for,
    map_extraction,
    relationship_id_for,
)
from redstring.extraction.schema import ExtractedRelationship, Extraction
from redstring.testing.factories import OTHER_TENANT, TENANT

DOC = SourceId("doc-1")
ADA = EntityId(UUID("00000000-0000-4000-8000-00000000000a"))
BABBAGE = EntityId(UUID("00000000-0000-4000-8000-00000000000b"))

names = st.text(min_size=1, max_size=20)


def answer(*entities: dict[str, Any], relationships: tuple[dict[str, Any], ...] = ()) -> Extraction:
    return Extraction.model_validate(
        {"entities": list(entities), "relationships": list(relationships)}
    )


def person(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "entity_type": "person", **fields}


def test_the_id_namespace_is_pinned_because_every_stored_id_depends_on_it() -> None:
    assert UUID("6f1d8a52-3c4e-5b7a-9d2f-0e8c1b4a7d36") == EXTRACTION_ID_NAMESPACE


def test_an_entity_id_is_uuid5_of_the_length_prefixed_normalized_parts() -> None:
    """Pinned so that a change of encoding, which would orphan stored ids, is seen."""
    encoded = "6:entity36:00000000-0000-4000-8000-0000000000015:doc-16:person12:ada lovelace"

    assert entity_id_for(TENANT, DOC, "Person", "Ada  Lovelace") == uuid5(
        UUID("6f1d8a52-3c4e-5b7a-9d2f-0e8c1b4a7d36"), encoded
    )


def test_an_entity_id_ignores_case_and_spacing_of_type_and_name() -> None:
    built = "  ".join(["ADA", "Lovelace"])

    assert entity_id_for(TENANT, DOC, " Person ", built) == entity_id_for(
        TENANT, DOC, "person", "ada lovelace"
    )


@given(st.text(max_size=20), names, names)
@example("doc", "person", "Ada")
def test_the_same_name_in_two_tenants_gets_two_ids(
    source: str, entity_type: str, name: str
) -> None:
    assert entity_id_for(TENANT, SourceId(source), entity_type, name) != entity_id_for(
        OTHER_TENANT, SourceId(source), entity_type, name
    )


def test_the_same_name_from_another_document_or_of_another_type_gets_another_id() -> None:
    ada = entity_id_for(TENANT, DOC, "person", "Ada")

    assert ada != entity_id_for(TENANT, SourceId("doc-2"), "person", "Ada")
    assert ada != entity_id_for(TENANT, DOC, "ship", "Ada")


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (("ab", "c", "d"), ("a", "bc", "d")),
        (("a", "b", "cd"), ("a", "bc", "d")),
        (("doc\x1fperson", "x", "y"), ("doc", "person\x1fx", "y")),
        (("doc:1", "x", "y"), ("doc", "1:x", "y")),
    ],
)
def test_parts_that_concatenate_alike_still_get_different_ids(
    left: tuple[str, str, str], right: tuple[str, str, str]
) -> None:
    source, entity_type, name = left
    other_source, other_type, other_name = right

    assert entity_id_for(TENANT, SourceId(source), entity_type, name) != entity_id_for(
        TENANT, SourceId(other_source), other_type, other_name
    )


def test_an_id_is_computed_even_for_a_name_no_store_could_hold() -> None:
    surrogate = chr(0xD800)

    assert entity_id_for(TENANT, DOC, "person", surrogate) == entity_id_for(
        TENANT, DOC, "person", surrogate
    )


def test_a_relationship_id_depends_on_direction_and_tenant_but_not_type_spelling() -> None:
    forward = relationship_id_for(TENANT, DOC, "knew", ADA, BABBAGE)

    assert forward == relationship_id_for(TENANT, DOC, " KNEW ", ADA, BABBAGE)
    assert forward != relationship_id_for(TENANT, DOC, "knew", BABBAGE, ADA)
    assert forward != relationship_id_for(OTHER_TENANT, DOC, "knew", ADA, BABBAGE)
    assert forward != relationship_id_for(TENANT, DOC, "met", ADA, BABBAGE)
    assert forward != relationship_id_for(TENANT, SourceId("doc-2"), "knew", ADA, BABBAGE)


def test_a_mapped_entity_carries_its_provenance_id_and_blocking_keys() -> None:
    row = person(
        "Ada  Lovelace", description="Mathematician", confidence=0.75, properties={"born": 1815}
    )

    mapped = map_extraction(answer(row), tenant_id=TENANT, source_id=DOC, model="m/x")

    [entity] = mapped.entities
    assert entity.id == entity_id_for(TENANT, DOC, "person", "Ada Lovelace")
    assert (entity.tenant_id, entity.source_id, entity.model) == (TENANT, DOC, "m/x")
    assert entity.extraction_method is ExtractionMethod.LLM
    assert (entity.name, entity.normalized_name) == ("Ada  Lovelace", "ada lovelace")
    assert (entity.description, entity.confidence) == ("Mathematician", 0.75)
    assert entity.properties == {"born": 1815}
    assert entity.blocking_keys == blocking_keys_for(entity)
    assert entity.blocking_keys is not None
    assert "t:person" in entity.blocking_keys
    assert mapped.dropped_rows == 0


@pytest.mark.parametrize(
    "bad",
    [
        person(""),
        person(" \t "),
        {"name": "Ada", "entity_type": " "},
        person("Ada" + chr(0)),
        person("Ada", description="a" + chr(0xDC00)),
        person("Ada", confidence=1.5),
        person("Ada", confidence=-0.25),
        person("Ada", confidence=float("nan")),
        person("Ada", properties={"note": "x" + chr(0)}),
    ],
)
def test_a_bad_row_before_a_good_one_is_dropped_and_counted(bad: dict[str, Any]) -> None:
    mapped = map_extraction(
        answer(bad, person("Charles Babbage")), tenant_id=TENANT, source_id=DOC, model="m"
    )

    assert [entity.name for entity in mapped.entities] == ["Charles Babbage"]
    assert mapped.dropped_rows == 1


@pytest.mark.parametrize("confidence", [0.0, 1.0])
def test_a_confidence_at_either_bound_is_kept(confidence: float) -> None:
    mapped = map_extraction(
        answer(person("Ada", confidence=confidence)), tenant_id=TENANT, source_id=DOC, model="m"
    )

    assert [entity.confidence for entity in mapped.entities] == [confidence]


def test_rows_sharing_an_id_are_all_kept_in_row_order_for_the_caller_to_merge() -> None:
    mapped = map_extraction(
        answer(person("Ada"), person("Babbage"), person("ADA")),
        tenant_id=TENANT,
        source_id=DOC,
        model="m",
    )

    assert [entity.name for entity in mapped.entities] == ["Ada", "Babbage", "ADA"]
    assert mapped.entities[0].id == mapped.entities[2].id


def test_relationship_rows_are_kept_as_written_for_resolution_across_chunks() -> None:
    rows = (
        {"source_name": "Ada", "target_name": "Nobody", "relationship_type": "knew"},
        {"source_name": "", "target_name": "", "relationship_type": "", "confidence": 9},
    )

    mapped = map_extraction(answer(relationships=rows), tenant_id=TENANT, source_id=DOC, model="m")

    assert mapped.relationships == tuple(ExtractedRelationship.model_validate(r) for r in rows)
    assert mapped.dropped_rows == 0


def test_mapping_neither_changes_the_answer_nor_shares_its_properties() -> None:
    extraction = answer(person("Ada", properties={"works": ["Notes"]}))
    before = extraction.model_dump()

    [entity] = map_extraction(extraction, tenant_id=TENANT, source_id=DOC, model="m").entities
    entity.properties["works"].append("Sketch")

    assert extraction.model_dump() == before
