"""The extraction schema is lenient about values and strict about types."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from redstring.domain.exceptions import MalformedCompletionError
from redstring.extraction.schema import ExtractedEntity, ExtractedRelationship, Extraction
from redstring.llm.adapters.fake import FakeLlmProvider


def test_an_empty_answer_has_no_entities_and_no_relationships() -> None:
    assert Extraction.model_validate({}) == Extraction(entities=[], relationships=[])


def test_rows_default_to_full_confidence_no_description_and_no_properties() -> None:
    entity = ExtractedEntity(name="Ada", entity_type="person")
    relationship = ExtractedRelationship(source_name="a", target_name="b", relationship_type="r")

    assert (entity.confidence, entity.description, entity.properties) == (1.0, None, {})
    assert (relationship.confidence, relationship.description) == (1.0, None)


def test_a_blank_name_a_nul_and_an_out_of_range_confidence_still_validate() -> None:
    extraction = Extraction.model_validate(
        {
            "entities": [{"name": " ", "entity_type": "a" + chr(0), "confidence": 7}],
            "relationships": [
                {"source_name": "", "target_name": "", "relationship_type": "", "confidence": -1}
            ],
        }
    )

    assert extraction.entities[0].confidence == 7.0
    assert extraction.relationships[0].confidence == -1.0


def test_a_nan_confidence_validates_so_that_mapping_can_drop_the_row() -> None:
    entity = ExtractedEntity.model_validate(
        {"name": "Ada", "entity_type": "person", "confidence": "nan"}
    )

    assert math.isnan(entity.confidence)


def test_unknown_keys_in_an_answer_are_ignored() -> None:
    entity = ExtractedEntity.model_validate(
        {"name": "Ada", "entity_type": "person", "aliases": ["Countess"]}
    )

    assert "aliases" not in entity.model_dump()


@pytest.mark.parametrize(
    "payload",
    [
        {"entities": "Ada Lovelace"},
        {"relationships": {"source_name": "a"}},
        {"entities": [{"name": 7, "entity_type": "person"}]},
        {"entities": [{"name": "Ada"}]},
        {"entities": [{"name": "Ada", "entity_type": "person", "properties": ["x"]}]},
        {"entities": [{"name": "Ada", "entity_type": "person", "confidence": "high"}]},
    ],
)
def test_a_value_of_the_wrong_type_makes_the_whole_answer_malformed(
    payload: dict[str, object],
) -> None:
    with pytest.raises(ValidationError):
        Extraction.model_validate(payload)


async def test_a_provider_reports_a_wrong_type_as_a_malformed_completion() -> None:
    provider = FakeLlmProvider(script=[{"entities": "Ada Lovelace"}])

    with pytest.raises(MalformedCompletionError):
        await provider.extract("text", Extraction)
