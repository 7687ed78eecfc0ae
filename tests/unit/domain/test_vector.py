import math
from uuid import uuid4

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.ids import EntityId
from redstring.domain.vector import (
    Vector,
    VectorMatch,
    VectorRecord,
    cosine_similarity,
    cosine_to_score,
)
from redstring.testing.factories import TENANT

#: Components whose squares neither overflow nor underflow, so the exact cosine is representable.
component = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-100, max_value=1e100),
    st.floats(min_value=-1e100, max_value=-1e-100),
)


def vectors_of(size: int) -> st.SearchStrategy[list[float]]:
    return st.lists(component, min_size=size, max_size=size).filter(any)


vectors = st.integers(min_value=1, max_value=16).flatmap(vectors_of)
pairs = st.integers(min_value=1, max_value=16).flatmap(
    lambda size: st.tuples(vectors_of(size), vectors_of(size))
)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ([1.0, 0.0], [3.0, 0.0], 1.0),
        ([1.0, 2.0, 3.0], [-2.0, -4.0, -6.0], -1.0),
        ([1.0, 0.0], [0.0, 5.0], 0.0),
        ([1.0, 1.0], [1.0, 0.0], math.sqrt(0.5)),
        ([3.0, 4.0], [4.0, 3.0], 24.0 / 25.0),
    ],
    ids=["parallel", "antiparallel", "orthogonal", "45-degrees", "3-4-5"],
)
def test_cosine_similarity_of_known_pairs(
    left: list[float], right: list[float], expected: float
) -> None:
    assert cosine_similarity(left, right) == pytest.approx(expected, abs=1e-12)


@given(pairs)
@example(([1.0, 0.0], [0.0, 1.0]))
@example(([1e100, 1e-100], [-1e100, 1e-100]))
def test_cosine_similarity_is_on_minus_one_to_one_and_symmetric(
    pair: tuple[list[float], list[float]],
) -> None:
    left, right = pair

    cosine = cosine_similarity(left, right)

    assert -1.0 <= cosine <= 1.0
    assert cosine == pytest.approx(cosine_similarity(right, left), abs=1e-12)


@given(vectors, st.floats(min_value=1e-3, max_value=1e3))
@example([1.0], 1.0)
@example([1e-100, 1e100], 1e3)
def test_cosine_ignores_scale_and_flips_with_sign(vector: list[float], scale: float) -> None:
    scaled = [scale * x for x in vector]

    assert cosine_similarity(vector, scaled) == pytest.approx(1.0, abs=1e-9)
    assert cosine_similarity(vector, [-x for x in scaled]) == pytest.approx(-1.0, abs=1e-9)


def test_large_antiparallel_vectors_have_cosine_minus_one() -> None:
    assert cosine_similarity([1e200], [-1e200]) == pytest.approx(-1.0)


def test_tiny_non_zero_vectors_have_a_cosine() -> None:
    assert cosine_similarity([1e-200], [1e-200]) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_component_is_rejected_rather_than_clamped(bad: float) -> None:
    with pytest.raises(ValueError, match="NaN or infinity"):
        cosine_similarity([3.0, 4.0], [bad, 1.0])


@pytest.mark.parametrize(("left", "right"), [([1.0], [1.0, 0.0]), ([], [1.0]), ([1.0, 2.0], [])])
def test_vectors_of_different_length_are_rejected_naming_both_lengths(
    left: list[float], right: list[float]
) -> None:
    with pytest.raises(ValueError, match=rf"{len(left)} and {len(right)}"):
        cosine_similarity(left, right)


@pytest.mark.parametrize(
    ("left", "right"),
    [([0.0, 0.0], [1.0, 0.0]), ([1.0, 0.0], [0.0, 0.0]), ([-0.0], [-0.0]), ([], [])],
)
def test_a_zero_vector_is_rejected(left: list[float], right: list[float]) -> None:
    with pytest.raises(ValueError, match="zero vector"):
        cosine_similarity(left, right)


@pytest.mark.parametrize(
    ("cosine", "score"),
    [(-1.0, 0.0), (0.0, 0.5), (1.0, 1.0), (0.5, 0.75), (-0.5, 0.25)],
)
def test_cosine_to_score_maps_minus_one_to_one_onto_zero_to_one(
    cosine: float, score: float
) -> None:
    assert cosine_to_score(cosine) == score


@pytest.mark.parametrize(("cosine", "score"), [(1.0000001, 1.0), (-1.0000001, 0.0)])
def test_cosine_to_score_clamps_rounding_error(cosine: float, score: float) -> None:
    assert cosine_to_score(cosine) == score


@given(st.floats(min_value=-1.0, max_value=1.0), st.floats(min_value=-1.0, max_value=1.0))
@example(-1.0, 1.0)
def test_cosine_to_score_preserves_order(lower: float, higher: float) -> None:
    if lower > higher:
        lower, higher = higher, lower

    assert 0.0 <= cosine_to_score(lower) <= cosine_to_score(higher) <= 1.0


@given(st.floats(min_value=0.0, max_value=1.0))
@example(0.0)
@example(1.0)
def test_a_match_accepts_a_score_on_zero_to_one(score: float) -> None:
    assert VectorMatch(entity_id=EntityId(uuid4()), score=score).score == score


@given(st.one_of(st.floats(max_value=-1e-12), st.floats(min_value=1.0 + 1e-12)))
@example(-0.0001)
@example(1.0001)
@example(math.nan)
@example(math.inf)
def test_a_match_rejects_a_score_outside_zero_to_one(score: float) -> None:
    with pytest.raises(ValueError, match="score"):
        VectorMatch(entity_id=EntityId(uuid4()), score=score)


def test_a_record_keeps_its_vector_and_metadata() -> None:
    entity_id = EntityId(uuid4())
    record = VectorRecord(
        entity_id=entity_id,
        tenant_id=TENANT,
        vector=[0.5, -1.0],
        metadata={"entity_type": "person"},
    )

    assert (record.entity_id, record.tenant_id) == (entity_id, TENANT)
    assert record.vector == [0.5, -1.0]
    assert record.metadata == {"entity_type": "person"}


@pytest.mark.parametrize(
    "metadata",
    [{"entity_type": "per\x00son"}, {"entity\x00type": "person"}, {"tags": ["ok", ["\ud800"]]}],
    ids=["nul-value", "nul-key", "surrogate-nested"],
)
def test_a_record_rejects_unstorable_text_in_metadata(metadata: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="metadata"):
        VectorRecord(entity_id=EntityId(uuid4()), tenant_id=TENANT, vector=[1.0], metadata=metadata)


def test_records_and_matches_are_frozen_and_refuse_unknown_fields() -> None:
    match = VectorMatch(entity_id=EntityId(uuid4()), score=0.5)

    with pytest.raises(ValueError, match="frozen"):
        match.score = 0.9  # type: ignore[misc]
    with pytest.raises(ValueError, match="distance"):
        VectorMatch(entity_id=EntityId(uuid4()), score=0.5, distance=0.5)  # type: ignore[call-arg]


# -- Vector: what a record holds ---------------------------------------------------


def test_a_float32_array_is_kept_as_float32_and_a_list_as_float64() -> None:
    import numpy as np

    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    row, column = Vector(matrix[1]), Vector(matrix[:, 1])
    assert row.itemsize == 4
    assert row == [3.0, 4.0, 5.0]
    assert column == [1.0, 4.0]
    assert np.asarray(row).dtype == np.float32
    listed = Vector([1e308, 1e-320, 2])
    assert listed.itemsize == 8
    assert listed == [1e308, 1e-320, 2.0]
    assert Vector(np.array([0.1, 0.2])) == [0.1, 0.2]
    assert Vector(np.arange(3, dtype=np.uint8)) == [0.0, 1.0, 2.0]


def test_a_vector_reads_like_a_sequence_and_cannot_be_changed() -> None:
    import numpy as np

    source = np.ones(3, dtype=np.float32)
    vector = Vector(source)
    source[0] = 9.0
    assert (len(vector), vector[0], vector[-1], vector[1:], list(vector)) == (
        3,
        1.0,
        1.0,
        [1.0, 1.0],
        [1.0, 1.0, 1.0],
    )
    assert vector == (1.0, 1.0, 1.0)
    assert vector == Vector([1.0, 1.0, 1.0])
    assert vector != [1.0, 1.0]
    assert vector != [1.0, 1.0, 2.0]
    assert vector != "abc"
    assert repr(vector) == "Vector([1.0, 1.0, 1.0])"
    assert Vector(vector) == vector
    with pytest.raises(TypeError):
        vector[0] = 2.0  # type: ignore[index]
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(vector)[0] = 2.0
    with pytest.raises(TypeError):
        hash(vector)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        pytest.param("0.5", "sequence of floats", id="str"),
        pytest.param(b"\x00\x00\x80?", "sequence of floats", id="bytes"),
        pytest.param({"a": 1.0}, "sequence of floats", id="dict"),
        pytest.param(None, "sequence of floats", id="none"),
        pytest.param(3.0, "sequence of floats", id="scalar"),
        pytest.param([[1.0], [2.0]], "real numbers", id="nested"),
        pytest.param([1.0, "2"], "real numbers", id="a-string-item"),
        pytest.param(memoryview(b"ab").cast("c"), "numbers, not format 'c'", id="char-buffer"),
    ],
)
def test_what_is_not_flat_numbers_is_refused_naming_why(bad: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Vector(bad)  # type: ignore[arg-type]


def test_a_buffer_that_is_not_one_dimensional_or_not_numbers_is_refused() -> None:
    import numpy as np

    with pytest.raises(ValueError, match=r"one-dimensional, got shape \(2, 2\)"):
        Vector(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="not format '\\?'"):
        Vector(np.array([True, False]))


def test_a_record_takes_an_array_and_round_trips_through_json_as_a_list() -> None:
    import numpy as np

    record = VectorRecord(
        entity_id=EntityId(uuid4()), tenant_id=TENANT, vector=np.ones(2, dtype=np.float32)
    )
    assert isinstance(record.vector, Vector)
    assert record.model_dump()["vector"] == [1.0, 1.0]
    text = record.model_dump_json()
    assert '"vector":[1.0,1.0]' in text
    assert VectorRecord.model_validate_json(text) == record
    with pytest.raises(ValueError, match="sequence of floats"):
        VectorRecord(entity_id=EntityId(uuid4()), tenant_id=TENANT, vector="1.0")  # type: ignore[arg-type]
