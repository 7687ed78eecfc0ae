"""Vectors as stored, and matches as reported, with one pinned score scale.

"Score" means different things across vector databases: a distance where
lower is better, a cosine on `-1..1`, an inner product. An adapter that passed
its backend's number through would return plausible nonsense rather than an
error. So the scale is pinned here: `VectorMatch.score` is cosine similarity
mapped onto `0..1` by `(1 + cos) / 2`, higher is better, and an adapter never
reports a distance.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Buffer, Iterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, cast, overload

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, field_validator

from redstring.domain.ids import EntityId, TenantId  # noqa: TC001 - pydantic needs them
from redstring.domain.json_safety import check_json

type VectorLike = Sequence[float] | Buffer
"""What a vector may be given as: a sequence of floats, or a buffer of them.

A buffer is anything exposing the buffer protocol with float32 or float64
items (format `f` or `d`): a numpy array or one of its rows, an
`array.array("f")`, a `memoryview`. A buffer is copied as bytes, with no
step per component.
"""

#: Buffer item formats taken as they are, and the `array` type code of each.
type _Typecode = Literal["f", "d"]
_TYPECODES: Final[dict[str, _Typecode]] = {
    "f": "f",
    "d": "d",
    "=f": "f",
    "=d": "d",
    "@f": "f",
    "@d": "d",
}
#: Integer item formats, converted one by one (a buffer of floats is the fast path).
_INTEGER_FORMATS: Final = frozenset("bBhHiIlLqQnN")
if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

if sys.byteorder == "little":
    _TYPECODES.update({"<f": "f", "<d": "d"})
else:  # pragma: no cover - the machines this runs on are little-endian
    _TYPECODES.update({">f": "f", ">d": "d"})


class Vector(Sequence[float]):
    """An immutable vector of floats, kept as one block of float32 or float64 values.

    A float32 buffer (a numpy `float32` array, say) is kept as float32, and
    a float64 buffer or a sequence of Python floats as float64, so nothing
    is rounded on the way in. It is a `Sequence[float]`: it compares equal to
    a list or tuple with the same values (`Vector([1.0]) == [1.0]`) and
    indexes to Python floats. It exposes its values as a read-only buffer
    (`numpy.asarray(vector)` reads them without a copy) and as bytes
    (`tobytes`). It cannot be changed, so a store can hand it out without
    copying it.

    Raises:
        ValueError: `values` is a string, not one-dimensional, holds
            something other than real numbers, or is a buffer of items that
            are not numbers.
    """

    __slots__ = ("_data", "_typecode")
    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __init__(self, values: VectorLike) -> None:
        self._typecode, self._data = _as_bytes(values)

    @property
    def itemsize(self) -> int:
        """Bytes per component: 4 for float32, 8 for float64."""
        return 4 if self._typecode == "f" else 8

    def tobytes(self) -> bytes:
        """The values as machine-order float32 or float64 bytes (see `itemsize`).

        Immutable, so it is returned without a copy: the fast way for a store
        to read many vectors at once.
        """
        return self._data

    def _view(self) -> memoryview[float]:
        return memoryview(self._data).cast(self._typecode)

    def tolist(self) -> list[float]:
        """The values as a new list of Python floats."""
        return cast("list[float]", self._view().tolist())

    def __len__(self) -> int:
        return len(self._data) // self.itemsize

    @overload
    def __getitem__(self, index: int) -> float: ...

    @overload
    def __getitem__(self, index: slice) -> list[float]: ...

    def __getitem__(self, index: int | slice) -> float | list[float]:
        if isinstance(index, slice):
            return cast("list[float]", self._view()[index].tolist())
        value: float = self._view()[index]
        return value

    def __iter__(self) -> Iterator[float]:
        return iter(self.tolist())

    def __buffer__(self, flags: int) -> memoryview:
        return cast("memoryview", self._view())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Vector):
            return self.tolist() == other.tolist()
        if isinstance(other, list | tuple):
            return len(other) == len(self) and self.tolist() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Vector({self.tolist()!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: object, handler: GetCoreSchemaHandler) -> Any:  # noqa: ANN401 - the CoreSchema type lives in pydantic_core
        """As a pydantic field: any `VectorLike` in, a list of floats out (and in JSON)."""
        return handler.generate_schema(
            Annotated[
                Any,
                PlainValidator(_vector_from, json_schema_input_type=list[float]),
                PlainSerializer(_vector_to_list, return_type=list[float]),
            ]
        )


def _as_bytes(values: object) -> tuple[_Typecode, bytes]:
    """`values` as a type code (`f` float32, `d` float64) and the bytes of its items."""
    if isinstance(values, Vector):
        return values._typecode, values._data
    if isinstance(values, str | bytes | bytearray | dict) or values is None:
        raise ValueError(f"a vector must be a sequence of floats, got {type(values).__name__}")
    if isinstance(values, Buffer):
        view = memoryview(values)
        if view.ndim != 1:
            raise ValueError(f"a vector must be one-dimensional, got shape {view.shape}")
        typecode = _TYPECODES.get(view.format)
        if typecode is not None:
            return typecode, view.tobytes()
        if view.format.lstrip("@=<>!") in _INTEGER_FORMATS:
            return "d", array("d", view.tolist()).tobytes()
        raise ValueError(f"a vector buffer must hold numbers, not format {view.format!r}")
    if not isinstance(values, Sequence):
        raise ValueError(f"a vector must be a sequence of floats, got {type(values).__name__}")
    try:
        return "d", array("d", values).tobytes()
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"a vector must be flat real numbers: {exc}") from exc


def _vector_from(value: object) -> Vector:
    return value if isinstance(value, Vector) else Vector(value)  # type: ignore[arg-type]


def _vector_to_list(vector: Vector) -> list[float]:
    return vector.tolist()


class VectorRecord(BaseModel):
    """One entity's vector in one tenant, with metadata to filter on.

    `vector` may be given as any `VectorLike`: a float32 numpy array (or
    one of its rows) is kept as float32 without a step per component; a list
    of floats is kept at float64. Parsed from JSON, it is a list of numbers;
    dumped, a list of floats. It is a `Vector`, immutable, equal to a
    list with the same values. `metadata["entity_type"]`, when present, is
    what `VectorStore.search`'s `entity_types` filter compares against. The
    numeric checks (length, finite, non-zero) are the store's, which knows
    its dimension.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity_id: EntityId
    tenant_id: TenantId
    vector: Vector
    metadata: dict[str, Any] = Field(default_factory=dict)

    if TYPE_CHECKING:
        # What the constructor takes: `vector` is converted to a `Vector`.
        def __init__(
            self,
            *,
            entity_id: EntityId,
            tenant_id: TenantId,
            vector: VectorLike,
            metadata: dict[str, Any] = ...,
        ) -> None: ...

    @field_validator("metadata")
    @classmethod
    def _metadata_is_storable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_json(value, field="metadata")


class VectorMatch(BaseModel):
    """One search hit: cosine mapped onto `0..1`, higher is better."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity_id: EntityId
    score: float = Field(ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)


def cosine_to_score(cosine: float) -> float:
    """Map a cosine on `-1..1` onto the `0..1` score scale, clamping rounding error."""
    return min(1.0, max(0.0, (1.0 + cosine) / 2.0))


def cosine_similarity(left: Sequence[float], right: Sequence[float]) -> float:
    """Cosine of the angle between two equal-length, non-zero vectors, on `-1..1`.

    Each vector is scaled by its largest magnitude first, so neither very
    large nor very small components overflow or underflow the squares.

    Raises:
        ValueError: either side is not a sequence of numbers, the lengths
            differ, either vector is zero, or a component is NaN or infinite.
    """
    for argument, value in (("left", left), ("right", right)):
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ValueError(f"{argument} must be a sequence of numbers, got {value!r:.80}")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
            raise ValueError(f"{argument} must hold only numbers, got {value!r:.80}")
    if len(left) != len(right):
        raise ValueError(f"vectors differ in length: {len(left)} and {len(right)}")
    scaled = []
    for vector in (left, right):
        if not all(math.isfinite(x) for x in vector):
            raise ValueError("cosine is undefined for a vector with NaN or infinity")
        largest = max((abs(x) for x in vector), default=0.0)
        if largest == 0.0:
            raise ValueError("cosine is undefined for a zero vector")
        scaled.append([x / largest for x in vector])
    a, b = scaled
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return max(-1.0, min(1.0, dot / norms))
