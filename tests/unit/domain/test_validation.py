import math
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain import validation
from redstring.domain.limits import MAX_DEPTH, MAX_LIMIT, MAX_NAME_LENGTH, MAX_QUERY_LENGTH
from redstring.domain.validation import (
    check_depth,
    check_entities,
    check_entity_id,
    check_entity_ids,
    check_entity_types,
    check_limit,
    check_metadata,
    check_min_score,
    check_names,
    check_optional_limit,
    check_optional_name,
    check_path,
    check_query,
    check_relationship_id,
    check_relationships,
    check_tenant_id,
)
from redstring.testing.factories import TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from redstring.domain.entity import Entity

ID = UUID("00000000-0000-4000-8000-000000000009")


@pytest.mark.parametrize("check", [check_tenant_id, check_entity_id, check_relationship_id])
def test_a_uuid_is_accepted_as_an_id(check: Any) -> None:
    assert check(ID) is ID


@pytest.mark.parametrize(
    ("check", "argument", "kind"),
    [
        (check_tenant_id, "tenant_id", "TenantId"),
        (check_entity_id, "entity_id", "EntityId"),
        (check_relationship_id, "relationship_id", "RelationshipId"),
    ],
)
@pytest.mark.parametrize("value", [str(ID), ID.int, ID.bytes, None, 1.5, True])
def test_anything_but_a_uuid_is_refused_naming_the_argument_and_the_fix(
    check: Any, argument: str, kind: str, value: object
) -> None:
    with pytest.raises(
        ValueError, match=rf"^{argument} must be an? {kind} \(a uuid.UUID\).*pass {kind}\(UUID"
    ):
        check(value)


def test_a_bad_id_in_a_sequence_is_named_by_its_index() -> None:
    assert check_entity_ids([ID, ID]) == [ID, ID]
    with pytest.raises(ValueError, match=r"^entity_ids\[1\] must be an? EntityId"):
        check_entity_ids([ID, str(ID)])
    with pytest.raises(ValueError, match=r"^entity_ids must be a sequence"):
        check_entity_ids(str(ID))


@given(st.integers(min_value=0, max_value=MAX_LIMIT))
@example(0)
@example(MAX_LIMIT)
def test_a_limit_within_bounds_is_accepted(limit: int) -> None:
    assert check_limit(limit) == limit


@pytest.mark.parametrize("limit", [-1, 100_001, 2**64, True, 1.0, "3", None])
def test_a_limit_out_of_bounds_or_not_an_integer_is_refused(limit: object) -> None:
    with pytest.raises(ValueError, match=r"^limit must be"):
        check_limit(limit)


def test_an_optional_limit_accepts_none_and_checks_the_rest() -> None:
    assert check_optional_limit(None) is None
    with pytest.raises(ValueError, match=r"^k must be within 0..100000, got 100001$"):
        check_optional_limit(100_001, argument="k")


def test_depth_is_an_integer_from_one_to_the_limit() -> None:
    assert check_depth(1) == 1
    assert check_depth(MAX_DEPTH) == MAX_DEPTH
    for depth in (0, MAX_DEPTH + 1, 10**9, True, "2"):
        with pytest.raises(ValueError, match=r"^depth must be"):
            check_depth(depth)


@pytest.mark.parametrize("score", [0, 0.0, 0.5, 1, 1.0])
def test_a_min_score_on_zero_to_one_is_accepted_as_a_float(score: float) -> None:
    assert check_min_score(score) == score
    assert isinstance(check_min_score(score), float)


@pytest.mark.parametrize("score", [-0.01, 1.01, math.nan, math.inf, True, "0.5", [0.5]])
def test_a_min_score_off_the_scale_or_not_a_number_is_refused(score: object) -> None:
    with pytest.raises(ValueError, match=r"^min_score must be"):
        check_min_score(score)


def test_a_name_filter_is_storable_text_within_the_length_limit() -> None:
    assert check_optional_name(None, argument="name") is None
    assert check_optional_name("x" * MAX_NAME_LENGTH, argument="name") == "x" * MAX_NAME_LENGTH
    for bad, problem in [
        ("x" * (MAX_NAME_LENGTH + 1), "1001 characters long; the limit is 1000"),
        ("a\x00", "NUL"),
        ("\ud800", "surrogate"),
        (7, "must be a string, got int 7"),
    ]:
        with pytest.raises(ValueError, match=problem):
            check_optional_name(bad, argument="name")


def test_a_long_value_is_quoted_short() -> None:
    with pytest.raises(ValueError, match=r"\.\.\. \(1000003 characters\)$"):
        check_optional_name("x" * 1_000_001, argument="name")


def test_a_query_is_non_blank_text_within_the_query_limit() -> None:
    assert check_query("Ada") == "Ada"
    assert check_query("x" * MAX_QUERY_LENGTH)
    for bad in ["", "   ", "x" * (MAX_QUERY_LENGTH + 1), None, b"Ada", "\x00"]:
        with pytest.raises(ValueError, match=r"^query"):
            check_query(bad)


def test_entity_types_are_none_or_a_sequence_of_names() -> None:
    assert check_entity_types(None) is None
    assert check_entity_types([]) == []
    assert check_entity_types(("person",)) == ("person",)
    for bad in ["person", [1], [None], 3, {"person"}]:
        with pytest.raises(ValueError, match=r"^entity_types"):
            check_entity_types(bad)


def test_keys_are_a_sequence_of_storable_strings() -> None:
    assert check_names(["p:ada"], argument="keys") == ["p:ada"]
    with pytest.raises(ValueError, match=r"^keys\[0\] contains an unpaired surrogate"):
        check_names(["\udc80"], argument="keys")


def test_metadata_is_none_or_a_plain_json_dict() -> None:
    assert check_metadata(None) is None
    assert check_metadata({"entity_type": "person"}) == {"entity_type": "person"}
    with pytest.raises(ValueError, match=r"^metadata must be a dict"):
        check_metadata([("entity_type", "person")])
    with pytest.raises(ValueError, match=r"^metadata\['n'\] is an integer outside"):
        check_metadata({"n": 2**64})


def test_a_valid_batch_passes_the_store_edge_checks_unchanged() -> None:
    entity = make_entity()
    relationship = make_relationship(entity, entity)
    assert check_entities([entity]) == [entity]
    assert check_relationships([relationship]) == [relationship]


@pytest.mark.parametrize(
    ("update", "problem"),
    [
        ({"confidence": math.nan}, r"entities\[1\]\.confidence must be a finite number"),
        ({"confidence": 1.5}, r"entities\[1\]\.confidence"),
        ({"properties": {"n": 2**64}}, r"entities\[1\]\.properties\['n'\] is an integer outside"),
        ({"properties": {"x": math.inf}}, r"entities\[1\]\.properties\['x'\] is inf"),
        ({"properties": ("a",)}, r"entities\[1\]\.properties must be a dict"),
        ({"name": "  "}, r"entities\[1\]\.name must not be blank"),
        ({"name": "x" * 1001}, r"entities\[1\]\.name is 1001 characters long"),
        ({"entity_type": 3}, r"entities\[1\]\.entity_type must be a string"),
        ({"description": "a\x00"}, r"entities\[1\]\.description contains a NUL"),
        ({"tenant_id": str(TENANT)}, r"entities\[1\]\.tenant_id must be a TenantId"),
        ({"id": 7}, r"entities\[1\]\.id must be an? EntityId"),
        ({"blocking_keys": {"p:ada"}}, r"entities\[1\]\.blocking_keys must be a frozenset"),
        ({"blocking_keys": frozenset({"\ud800"})}, r"entities\[1\]\.blocking_keys contains"),
        ({"extraction_method": "llm"}, r"entities\[1\]\.extraction_method must be"),
    ],
)
def test_an_entity_copied_past_validation_is_refused_at_the_store_edge(
    update: dict[str, Any], problem: str
) -> None:
    """`model_copy(update=...)` skips validation; the store edge does not."""
    bad: Entity = make_entity().model_copy(update=update)
    with pytest.raises(ValueError, match=problem):
        check_entities([make_entity(), bad])


def test_a_relationship_copied_past_validation_is_refused_at_the_store_edge() -> None:
    entity = make_entity()
    good = make_relationship(entity, entity)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"confidence": math.nan}, r"relationships\[0\]\.confidence"),
        ({"source_entity_id": str(entity.id)}, r"relationships\[0\]\.source_entity_id"),
        ({"target_entity_id": None}, r"relationships\[0\]\.target_entity_id"),
        ({"relationship_type": ""}, r"relationships\[0\]\.relationship_type must not be blank"),
        ({"id": "x"}, r"relationships\[0\]\.id must be a RelationshipId"),
    ]
    for update, problem in cases:
        with pytest.raises(ValueError, match=problem):
            check_relationships([good.model_copy(update=update)])
    with pytest.raises(ValueError, match=r"^relationships\[0\] is not a Relationship"):
        check_relationships([entity])
    with pytest.raises(ValueError, match=r"^entities\[0\] is not an Entity"):
        check_entities([good])


def test_an_unusual_but_storable_entity_passes_the_slow_checks() -> None:
    """An int confidence misses the fast path, which is stricter; the full checks accept it."""
    for keys in (None, frozenset({"p:ada l"})):
        entity = make_entity(blocking_keys=keys).model_copy(update={"confidence": 1})
        assert check_entities([entity]) == [entity]


def test_a_text_field_that_is_not_a_string_is_refused_at_the_store_edge() -> None:
    with pytest.raises(ValueError, match=r"^entities\[0\]\.description must be a string"):
        check_entities([make_entity().model_copy(update={"description": 7})])


class _Text(str):
    __slots__ = ()


class _Dict(dict[str, Any]):
    pass


#: Changes `model_copy(update=...)` lets through, each storable or not.
_UPDATES: list[dict[str, Any]] = [
    {},
    {"confidence": math.nan},
    {"confidence": 1},
    {"confidence": 1.0000001},
    {"confidence": 0.0},
    {"name": "x" * MAX_NAME_LENGTH},
    {"name": "x" * (MAX_NAME_LENGTH + 1)},
    {"name": " \t"},
    {"name": _Text("Ada")},
    {"name": "Ada\x00"},
    {"normalized_name": ""},
    {"normalized_name": "\ud800"},
    {"normalized_name": "x" * (MAX_NAME_LENGTH + 1)},
    {"entity_type": ""},
    {"entity_type": 3},
    {"description": 7},
    {"description": "a\x00"},
    {"source_id": "\udfff"},
    {"model": "e5"},
    {"model": _Text("e5")},
    {"properties": {"aliases": ["Ada", 7]}},
    {"properties": {"k": "\x00"}},
    {"properties": _Dict(k=1)},
    {"properties": ("a",)},
    {"extraction_method": "llm"},
    {"tenant_id": str(TENANT)},
    {"id": 7},
    {"blocking_keys": None},
    {"blocking_keys": {"p:ada"}},
    {"blocking_keys": frozenset({_Text("p:ada")})},
    {"blocking_keys": frozenset({"p:ada", 7})},
    {"blocking_keys": frozenset({"\x00"})},
]


@given(st.lists(st.sampled_from(range(len(_UPDATES))), min_size=2, max_size=6))
@example([0, 0])
@example([9, 0])  # a bad row before a good one
@example([0, 29])  # a `str` subclass key: not for the fast checks, fine for the full ones
def test_the_batch_checks_pass_exactly_the_batches_whose_every_entity_passes_alone(
    picks: list[int],
) -> None:
    batch = [make_entity().model_copy(update=_UPDATES[pick]) for pick in picks]
    alone = [validation._storable_entity(entity) for entity in batch]
    assert validation._storable_entities(batch) == all(alone)


def test_an_entity_missing_a_field_is_left_to_the_entity_by_entity_checks() -> None:
    entity = make_entity()
    del entity.__dict__["model"]
    assert not validation._storable_entities([entity])
    assert not validation._storable_entities([make_entity(), 7])
    # A `__dict__` of a dict subclass could answer lookups its own way.
    odd = make_entity()
    object.__setattr__(odd, "__dict__", _Dict(odd.__dict__))
    assert not validation._storable_entities([odd])
    assert check_entities([odd]) == [odd]


@pytest.mark.parametrize("bad", [0, 4095, 4096, 4097, 8191, 8192, 9000])
def test_a_bad_entity_anywhere_in_a_large_batch_is_named_by_its_index(bad: int) -> None:
    """The batch's texts are scanned in chunks: a bad one each side of a chunk's end."""
    entity = make_entity(description="fine")
    batch = [entity] * 9001
    batch[bad] = entity.model_copy(update={"description": "a\x00"})
    with pytest.raises(ValueError, match=rf"^entities\[{bad}\]\.description contains a NUL"):
        check_entities(batch)
    assert check_entities([entity] * 9001) == [entity] * 9001


class BytesPath:
    def __fspath__(self) -> bytes:
        return b"graph.db"


def test_a_path_is_text_or_path_like_text() -> None:
    assert check_path("graph.db") == "graph.db"
    assert check_path(Path("graph.db")) == "graph.db"
    for bad, problem in [
        (b"graph.db", "must be a str or os.PathLike"),
        (None, "must be a str or os.PathLike"),
        (BytesPath(), "must be a text path, not bytes"),
        ("graph\x00.db", "NUL"),
        ("\ud800.db", "surrogate"),
    ]:
        with pytest.raises(ValueError, match=problem):
            check_path(bad)
