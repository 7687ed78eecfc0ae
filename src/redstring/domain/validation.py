"""Checks on the arguments of public entry points, one call at the top of each.

Every adapter, and every composed object, starts each public method with
these, so that every implementation of a port refuses the same values with
the same message. Each check returns its argument unchanged (or as the type
it was checked to be) and raises `ValueError` naming the argument and the
value otherwise.

Ids must be `uuid.UUID` instances (`EntityId`, `RelationshipId` and
`TenantId` are `NewType`s over it). A UUID *string* is refused rather than
parsed: one store comparing it as text and another as a UUID is how two
adapters came to answer the same call differently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.exceptions import EmbeddingProviderError
from redstring.domain.json_safety import (
    check_filled,
    check_json,
    check_name,
    check_text,
    is_plain_json,
    is_storable_text,
    shown,
)
from redstring.domain.limits import MAX_DEPTH, MAX_LIMIT, MAX_NAME_LENGTH, MAX_QUERY_LENGTH
from redstring.domain.relationship import Relationship

if TYPE_CHECKING:
    from redstring.domain.ids import EntityId, RelationshipId, TenantId


def _check_uuid(value: object, *, argument: str, kind: str) -> UUID:
    if not isinstance(value, UUID):
        article = "an" if kind[0] in "AEIOU" else "a"
        raise ValueError(
            f"{argument} must be {article} {kind} (a uuid.UUID), got {type(value).__name__} "
            f"{shown(value)}; pass {kind}(UUID(...))"
        )
    return value


def check_tenant_id(value: object, *, argument: str = "tenant_id") -> TenantId:
    """`value` as a `TenantId`, or `ValueError` unless it is a `uuid.UUID`."""
    return _check_uuid(value, argument=argument, kind="TenantId")  # type: ignore[return-value]


def check_entity_id(value: object, *, argument: str = "entity_id") -> EntityId:
    """`value` as an `EntityId`, or `ValueError` unless it is a `uuid.UUID`."""
    return _check_uuid(value, argument=argument, kind="EntityId")  # type: ignore[return-value]


def check_relationship_id(value: object, *, argument: str = "relationship_id") -> RelationshipId:
    """`value` as a `RelationshipId`, or `ValueError` unless it is a `uuid.UUID`."""
    return _check_uuid(value, argument=argument, kind="RelationshipId")  # type: ignore[return-value]


def check_sequence(value: object, *, argument: str) -> Sequence[Any]:
    """`value`, once it is a sequence that is not a bare string or bytes."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValueError(
            f"{argument} must be a sequence, got {type(value).__name__} {shown(value)}"
        )
    return value


def check_entity_ids(value: object, *, argument: str = "entity_ids") -> Sequence[EntityId]:
    """`value`, once it is a sequence of `uuid.UUID`s; the message names the first bad index."""
    items = check_sequence(value, argument=argument)
    for index, item in enumerate(items):
        if not isinstance(item, UUID):  # the message is formatted only for a bad item
            check_entity_id(item, argument=f"{argument}[{index}]")
    return items


def check_integer(value: object, *, argument: str, minimum: int, maximum: int) -> int:
    """`value`, once it is an `int` (not a `bool`) within `minimum..maximum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"{argument} must be an integer, got {type(value).__name__} {shown(value)}"
        )
    if not minimum <= value <= maximum:
        raise ValueError(f"{argument} must be within {minimum}..{maximum}, got {shown(value)}")
    return value


def check_limit(value: object, *, argument: str = "limit") -> int:
    """`value`, once it is an integer within `0..MAX_LIMIT`."""
    return check_integer(value, argument=argument, minimum=0, maximum=MAX_LIMIT)


def check_optional_limit(value: object, *, argument: str = "limit") -> int | None:
    """`None`, or `value` checked by `check_limit`."""
    return None if value is None else check_limit(value, argument=argument)


def check_depth(value: object, *, argument: str = "depth") -> int:
    """`value`, once it is an integer within `1..MAX_DEPTH`."""
    return check_integer(value, argument=argument, minimum=1, maximum=MAX_DEPTH)


def check_min_score(value: object, *, argument: str = "min_score") -> float | None:
    """`None`, or `value` as a float once it is a real number within `0..1`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{argument} must be a number, got {type(value).__name__} {shown(value)}")
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{argument} must be within 0..1, got {shown(value)}")
    return float(value)


def check_optional_name(value: object, *, argument: str) -> str | None:
    """`None`, or `value` checked by `check_name`."""
    return None if value is None else check_name(value, argument=argument)


def check_query(value: object, *, argument: str = "query") -> str:
    """`value`, once it is non-blank storable text of at most `MAX_QUERY_LENGTH` characters."""
    query = check_name(value, argument=argument, maximum=MAX_QUERY_LENGTH)
    if not query.strip():
        raise ValueError(f"{argument} must be a non-blank string, got {query!r}")
    return query


def check_names(value: object, *, argument: str) -> Sequence[str]:
    """`value`, once it is a sequence of names each passing `check_name`."""
    items = check_sequence(value, argument=argument)
    for index, item in enumerate(items):
        check_name(item, argument=f"{argument}[{index}]")
    return items


def check_texts(value: object, *, argument: str = "texts") -> list[str]:
    """`value` as a new list, once it is a sequence of strings and not itself a string.

    Raises:
        ValueError: `value` is a string or no sequence, or an item is no
            string; the message names the item's index.
    """
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"{argument} must be a sequence of strings, got {value!r}")
    batch = list(value)
    for index, text in enumerate(batch):
        if not isinstance(text, str):
            raise ValueError(f"{argument}[{index}] must be a string, got {text!r}")
    return batch


def check_vector_count(vectors: Sequence[object], count: int, *, model: str) -> None:
    """That an embedding model answered `count` texts with as many vectors.

    Raises:
        EmbeddingProviderError: it answered with another number, naming both.
    """
    if len(vectors) != count:
        reason = f"returned {len(vectors)} vectors for {count} texts"
        raise EmbeddingProviderError(model=model, reason=reason)


def check_entity_types(value: object, *, argument: str = "entity_types") -> Sequence[str] | None:
    """`None` (no filter), or a sequence of type names (`[]` matches nothing)."""
    return None if value is None else check_names(value, argument=argument)


def check_metadata(value: object, *, argument: str = "metadata") -> dict[str, Any] | None:
    """`None`, or `value` once it is a plain JSON dict within the payload limits."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"{argument} must be a dict, got {type(value).__name__} {shown(value)}")
    return check_json(value, field=argument)


def _check_stored_text(value: object, *, argument: str, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise ValueError(f"{argument} must be a string, got {type(value).__name__} {shown(value)}")
    check_text(value, field=argument)


def _check_confidence(value: object, *, argument: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and 0.0 <= value <= 1.0)
    ):
        raise ValueError(f"{argument} must be a finite number within 0..1, got {shown(value)}")


def _check_properties(value: object, *, argument: str) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{argument} must be a dict, got {shown(value)}")
    check_json(value, field=argument)


def _check_method(value: object, *, argument: str) -> None:
    if not isinstance(value, ExtractionMethod):
        raise ValueError(f"{argument} must be an ExtractionMethod, got {shown(value)}")


def _check_blocking_keys(value: object, *, argument: str) -> None:
    if value is None:
        return
    if not isinstance(value, frozenset):
        raise ValueError(f"{argument} must be a frozenset, got {shown(value)}")
    for key in value:
        _check_stored_text(key, argument=argument, optional=False)


def _check_type_name(value: object, *, argument: str) -> None:
    check_filled(check_name(value, argument=argument), field=argument)


def _storable_text(*texts: str | None) -> bool:
    """Whether every text is `None` or a storable `str`: one regex over them all."""
    present = [text for text in texts if text is not None]
    if any(type(text) is not str for text in present):
        return False
    return is_storable_text("".join(present))


def _storable_common(item: Entity | Relationship) -> bool:
    """The fast, silent form of the checks in `_COMMON_CHECKS`."""
    confidence = item.confidence
    return (
        isinstance(item.tenant_id, UUID)
        and type(item.extraction_method) is ExtractionMethod
        and type(confidence) is float
        and 0.0 <= confidence <= 1.0  # NaN fails both comparisons
        and (not item.properties or is_plain_json(item.properties))
        and type(item.properties) is dict
    )


def _storable_name(value: object) -> bool:
    return type(value) is str and 0 < len(value) <= MAX_NAME_LENGTH and not value.isspace()


def _storable_entity(entity: object) -> bool:
    """Whether `entity` passes every check of `check_entities`, without building a message."""
    if type(entity) is not Entity:
        return False
    keys = entity.blocking_keys
    return (
        isinstance(entity.id, UUID)
        and _storable_name(entity.name)
        and _storable_name(entity.entity_type)
        and type(entity.normalized_name) is str
        and len(entity.normalized_name) <= MAX_NAME_LENGTH
        and (keys is None or type(keys) is frozenset)
        and _storable_text(
            entity.name,
            entity.normalized_name,
            entity.entity_type,
            entity.description,
            entity.source_id,
            entity.model,
            *(keys or ()),
        )
        and _storable_common(entity)
    )


#: An entity's fields, read from its `__dict__` in one call.
_ENTITY_FIELDS: Final = itemgetter(
    "id",
    "tenant_id",
    "name",
    "normalized_name",
    "entity_type",
    "description",
    "source_id",
    "model",
    "properties",
    "extraction_method",
    "confidence",
    "blocking_keys",
)
#: How many entities' texts `_storable_entities` scans at a time.
_SCAN_EVERY: Final = 4096


def _storable_entities(items: Sequence[object]) -> bool:
    """Whether every item passes `_storable_entity`: the same checks, for a batch at once.

    The fields are read from each entity's `__dict__` in one call, and the
    texts of many entities are scanned by one regex search (a match is one
    character, so joining texts neither makes nor hides one).
    """
    texts: list[str] = []
    add, extend = texts.append, texts.extend
    try:
        for count, entity in enumerate(items, 1):
            if type(entity) is not Entity:
                return False
            state = entity.__dict__
            if type(state) is not dict:
                return False
            (
                entity_id,
                tenant_id,
                name,
                normalized,
                entity_type,
                description,
                source_id,
                model,
                properties,
                method,
                confidence,
                keys,
            ) = _ENTITY_FIELDS(state)
            if not (
                isinstance(entity_id, UUID)
                and isinstance(tenant_id, UUID)
                and type(name) is str
                and 0 < len(name) <= MAX_NAME_LENGTH
                and not name.isspace()
                and type(entity_type) is str
                and 0 < len(entity_type) <= MAX_NAME_LENGTH
                and not entity_type.isspace()
                and type(normalized) is str
                and len(normalized) <= MAX_NAME_LENGTH
                and type(method) is ExtractionMethod
                and type(confidence) is float
                and 0.0 <= confidence <= 1.0  # NaN fails both comparisons
                and type(properties) is dict
                and (not properties or is_plain_json(properties))
            ):
                return False
            add(name)
            add(normalized)
            add(entity_type)
            for text in (description, source_id, model):
                if text is not None:
                    if type(text) is not str:
                        return False
                    add(text)
            if keys is not None:
                if type(keys) is not frozenset:
                    return False
                for key in keys:
                    if type(key) is not str:
                        return False
                extend(keys)
            if count % _SCAN_EVERY == 0:
                if not is_storable_text("".join(texts)):
                    return False
                texts.clear()
    except KeyError:
        # A field missing from `__dict__`: the entity-by-entity checks say which.
        return False
    return is_storable_text("".join(texts))


def _storable_relationship(relationship: object) -> bool:
    """Whether `relationship` passes every check of `check_relationships`, silently."""
    if type(relationship) is not Relationship:
        return False
    return (
        isinstance(relationship.id, UUID)
        and isinstance(relationship.source_entity_id, UUID)
        and isinstance(relationship.target_entity_id, UUID)
        and _storable_name(relationship.relationship_type)
        and _storable_text(
            relationship.relationship_type,
            relationship.description,
            relationship.source_id,
            relationship.model,
        )
        and _storable_common(relationship)
    )


#: A field's name and the check of its value, which takes the field's path as `argument`.
type _FieldCheck = tuple[str, Callable[..., object]]

#: The fields entities and relationships share, in the order they are checked.
_COMMON_CHECKS: Final[tuple[_FieldCheck, ...]] = (
    ("tenant_id", check_tenant_id),
    ("description", _check_stored_text),
    ("source_id", _check_stored_text),
    ("model", _check_stored_text),
    ("properties", _check_properties),
    ("extraction_method", _check_method),
    ("confidence", _check_confidence),
)
_ENTITY_CHECKS: Final[tuple[_FieldCheck, ...]] = (
    ("id", check_entity_id),
    ("name", _check_type_name),
    ("normalized_name", check_name),
    ("entity_type", _check_type_name),
    *_COMMON_CHECKS,
    ("blocking_keys", _check_blocking_keys),
)
_RELATIONSHIP_CHECKS: Final[tuple[_FieldCheck, ...]] = (
    ("id", check_relationship_id),
    ("source_entity_id", check_entity_id),
    ("target_entity_id", check_entity_id),
    ("relationship_type", _check_type_name),
    *_COMMON_CHECKS,
)


def _check_each(
    items: Sequence[object],
    argument: str,
    kind: type,
    storable: Callable[[object], bool],
    checks: tuple[_FieldCheck, ...],
) -> None:
    """Raise `ValueError` for the first item `storable` refuses, naming its field."""
    for index, item in enumerate(items):
        if storable(item):
            continue
        at = f"{argument}[{index}]"
        if not isinstance(item, kind):
            article = "an" if kind.__name__[0] in "AEIOU" else "a"
            raise ValueError(f"{at} is not {article} {kind.__name__}: {shown(item)}")
        for field, check in checks:
            check(getattr(item, field), argument=f"{at}.{field}")


def check_entities(value: object, *, argument: str = "entities") -> Sequence[Entity]:
    """`value`, once it is a sequence of entities every store can write and read back.

    `Entity.model_copy(update=...)` skips validation, so a copy may carry a
    NaN confidence or an unstorable property that no store could read back.
    A store therefore checks each entity's fields again, cheaply, before
    writing any of the batch.
    """
    items = check_sequence(value, argument=argument)
    if not _storable_entities(items):
        _check_each(items, argument, Entity, _storable_entity, _ENTITY_CHECKS)
    return items


def check_relationships(
    value: object, *, argument: str = "relationships"
) -> Sequence[Relationship]:
    """`value`, once it is a sequence of relationships every store can write and read back.

    The store-edge counterpart of `check_entities`.
    """
    items = check_sequence(value, argument=argument)
    _check_each(items, argument, Relationship, _storable_relationship, _RELATIONSHIP_CHECKS)
    return items


def check_collaborator[T](value: T, port: type, *, argument: str) -> T:
    """`value`, once it satisfies `port`, a runtime-checkable protocol.

    Catches `None`, or an object of the wrong kind, where a collaborator is
    handed over, rather than at its first use deep inside a call.
    """
    if not isinstance(value, port):
        raise ValueError(
            f"{argument} must implement {port.__name__}, got {type(value).__name__} {shown(value)}"
        )
    return value


def check_optional_collaborators(*collaborators: tuple[str, object, type]) -> None:
    """`check_collaborator` for each `(argument, value, port)` whose value is not `None`."""
    for argument, value, port in collaborators:
        if value is not None:
            check_collaborator(value, port, argument=argument)


def check_path(value: object, *, argument: str = "path") -> str:
    """`value` as a `str` path, once it is a `str` or `os.PathLike` of storable text.

    Bytes paths are refused, like NUL and unpaired surrogates, which no file
    system API accepts in a path the same way everywhere.
    """
    # What `os.fspath` does, without importing `os` into the pure domain.
    fspath = getattr(type(value), "__fspath__", None)
    path = value if isinstance(value, str) else None if fspath is None else fspath(value)
    if path is None or isinstance(value, bytes):
        raise ValueError(
            f"{argument} must be a str or os.PathLike, got {type(value).__name__} {shown(value)}"
        )
    if not isinstance(path, str):
        raise ValueError(f"{argument} must be a text path, not bytes: {shown(value)}")
    return check_text(path, field=argument)
