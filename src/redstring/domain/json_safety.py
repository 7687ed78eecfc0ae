"""Reject text that no store can hold.

PostgreSQL `jsonb` and `text` refuse NUL, and UTF-8 cannot encode an unpaired
surrogate, so a string carrying either would be accepted in memory and fail on
the first real backend. It is refused at the field instead, everywhere.
"""

from __future__ import annotations

import math
import re
from functools import partial
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import AfterValidator

if TYPE_CHECKING:
    from collections.abc import Iterable

from redstring.domain.limits import (
    MAX_JSON_DEPTH,
    MAX_JSON_INT,
    MAX_JSON_SIZE,
    MAX_NAME_LENGTH,
    MIN_JSON_INT,
)

#: NUL, or any surrogate code point: UTF-8 cannot encode one, paired or not
#: (a real pair is a single astral character in a Python `str`). A compiled
#: pattern scans in C, which matters to every store that validates its rows.
_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def is_storable_text(value: str) -> bool:
    """Whether `check_text` would accept `value`, without building a message."""
    return _UNSAFE.search(value) is None


def check_text(value: str, *, field: str) -> str:
    """Return `value` unchanged, or raise `ValueError` naming `field`.

    Raises:
        ValueError: `value` contains NUL or an unpaired surrogate.
    """
    unsafe = _UNSAFE.search(value)
    if unsafe is None:
        return value
    if unsafe.group() == "\x00":
        raise ValueError(f"{field} contains a NUL character: {value!r}")
    raise ValueError(f"{field} contains an unpaired surrogate: {value!r}")


def _optional_text(value: str | None) -> str | None:
    return None if value is None else check_text(value, field="text field")


#: The validator of an optional text field: `None`, or text every store can hold.
STORABLE_TEXT: Final = AfterValidator(_optional_text)


def storable_json(field: str) -> AfterValidator:
    """The validator of a JSON field named `field`: `check_json` at the field."""
    return AfterValidator(partial(check_json, field=field))


def filled_name(field: str) -> AfterValidator:
    """The validator of a name field named `field`: not blank, then `check_name`."""

    def check(value: str) -> str:
        return check_name(check_filled(value, field=field), argument=field)

    return AfterValidator(check)


def filled_text(field: str) -> AfterValidator:
    """The validator of a text field named `field`: not blank, then `check_text`."""

    def check(value: str) -> str:
        return check_text(check_filled(value, field=field), field=field)

    return AfterValidator(check)


#: The longest value a message quotes before cutting it short.
_SHOWN = 80


def shown(value: object) -> str:
    """`repr(value)`, cut short so that a message never quotes a megabyte."""
    text = repr(value)
    if len(text) <= _SHOWN:
        return text
    return f"{text[:_SHOWN]}... ({len(text)} characters)"


def check_filled(value: str, *, field: str) -> str:
    """`value`, once it holds something besides white space.

    Raises:
        ValueError: `value` is empty or only white space; the message names `field`.
    """
    if not value.strip():
        raise ValueError(f"{field} must not be blank: {shown(value)}")
    return value


def check_name(value: object, *, argument: str, maximum: int = MAX_NAME_LENGTH) -> str:
    """`value`, once it is storable text of at most `maximum` characters."""
    if not isinstance(value, str):
        raise ValueError(f"{argument} must be a string, got {type(value).__name__} {shown(value)}")
    if len(value) > maximum:
        raise ValueError(
            f"{argument} is {len(value)} characters long; the limit is {maximum}: {shown(value)}"
        )
    return check_text(value, field=argument)


#: The key of the value a walk starts from, which has no key.
_ROOT: Final = object()


def _path(parent: str, key: object) -> str:
    return parent if key is _ROOT else f"{parent}[{key!r}]"


def check_json[T](value: T, *, field: str) -> T:
    """Check that `value` is plain JSON whose every string is storable.

    Plain JSON is a `dict` with `str` keys, a `list`, a `str`, an `int` within
    the signed 64-bit range, a finite `float`, a `bool` or `None`, nested at
    most `MAX_JSON_DEPTH` deep and at most `MAX_JSON_SIZE` in size (see
    `redstring.domain.limits`). The walk is iterative, so no nesting raises
    `RecursionError`. Returns `value` unchanged.

    Raises:
        ValueError: something else is reachable, some string is unsafe, an
            integer is out of range, or the value nests too deep or is too
            large; the message names the path to it.
    """
    size = 0
    # Each entry is (value, its container's path, its key or index, depth);
    # a leaf's own path is built only when it is refused.
    pending: list[tuple[object, str, object, int]] = [(value, field, _ROOT, 0)]
    while pending:
        item, parent, key, depth = pending.pop()
        size += 1
        if isinstance(item, str):
            size += len(item)
            if _UNSAFE.search(item) is not None:
                check_text(item, field=_path(parent, key))
        elif isinstance(item, dict):
            path = _path(parent, key)
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"{path} nests deeper than {MAX_JSON_DEPTH} levels")
            for name, child in item.items():
                if not isinstance(name, str):
                    raise ValueError(f"{path} has a non-string key {name!r}; JSON keys are strings")
                size += len(name)
                check_text(name, field=f"{path} key")
                pending.append((child, path, name, depth))
        elif isinstance(item, list):
            path = _path(parent, key)
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"{path} nests deeper than {MAX_JSON_DEPTH} levels")
            pending.extend((child, path, index, depth) for index, child in enumerate(item))
        elif isinstance(item, bool) or item is None:
            pass
        elif isinstance(item, int):
            if not MIN_JSON_INT <= item <= MAX_JSON_INT:
                raise ValueError(
                    f"{_path(parent, key)} is an integer outside the signed 64-bit range "
                    f"{MIN_JSON_INT}..{MAX_JSON_INT}, which not every store reads back exactly"
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"{_path(parent, key)} is {item!r}; JSON has no NaN or infinity")
        else:
            raise ValueError(
                f"{_path(parent, key)} is a {type(item).__name__} ({item!r}), not a JSON value; "
                "use a dict, list, str, int, float, bool or None"
            )
        if size > MAX_JSON_SIZE:
            raise ValueError(f"{field} is larger than the limit of {MAX_JSON_SIZE} (characters)")
    return value


def is_plain_json(value: object) -> bool:
    """Whether `check_json` would accept the dict `value`, answered without building a message.

    The same walk as `check_json` without the paths it keeps for its
    messages, and with one regex over all the text: a store calls this on
    every row it writes, and `check_json` only to explain a `False`. Dict
    and list subclasses answer `False` here, though `check_json` accepts
    them.
    """
    if type(value) is not dict:
        return False
    size = 1
    texts: list[str] = []
    pending: list[tuple[dict[Any, Any] | list[Any], int]] = [(value, 1)]
    while pending:
        container, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        size += len(container)
        if type(container) is dict:
            for key in container:
                if type(key) is not str:
                    return False
                texts.append(key)
            items: Iterable[object] = container.values()
        else:
            items = container
        for item in items:
            kind = type(item)
            if kind is str:
                texts.append(item)  # type: ignore[arg-type]
            elif kind is int:
                if not MIN_JSON_INT <= item <= MAX_JSON_INT:  # type: ignore[operator]
                    return False
            elif kind is float:
                if not math.isfinite(item):  # type: ignore[arg-type]
                    return False
            elif kind is dict or kind is list:
                pending.append((item, depth + 1))  # type: ignore[arg-type]
            elif item is not None and kind is not bool:
                return False
    joined = "".join(texts)
    return size + len(joined) <= MAX_JSON_SIZE and _UNSAFE.search(joined) is None


def copy_json[T](value: T) -> T:
    """A deep copy of a plain JSON value: containers are new, leaves are shared.

    Strings, numbers, `None` and booleans are immutable, so sharing them is
    safe; this is several times cheaper than `copy.deepcopy`, which matters on
    every read a store makes.
    """
    if isinstance(value, dict):
        return cast("T", {key: copy_json(item) for key, item in value.items()})
    if isinstance(value, list):
        return cast("T", [copy_json(item) for item in value])
    return value
