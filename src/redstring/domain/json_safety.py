"""Reject text that no store can hold.

PostgreSQL `jsonb` and `text` refuse NUL, and UTF-8 cannot encode an unpaired
surrogate, so a string carrying either would be accepted in memory and fail on
the first real backend. It is refused at the field instead, everywhere.
"""

from __future__ import annotations

import math
import re
from typing import cast

#: NUL, or any surrogate code point: UTF-8 cannot encode one, paired or not
#: (a real pair is a single astral character in a Python `str`). A compiled
#: pattern scans in C, which matters to every store that validates its rows.
_UNSAFE = re.compile("[\x00\ud800-\udfff]")


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


def check_json[T](value: T, *, field: str) -> T:
    """Check that `value` is plain JSON whose every string is storable.

    Plain JSON is a `dict` with `str` keys, a `list`, a `str`, an `int`, a
    finite `float`, a `bool` or `None`, nested freely. Returns `value`
    unchanged.

    Raises:
        ValueError: something else is reachable, or some string is unsafe;
            the message names the path to it.
    """
    if isinstance(value, str):
        check_text(value, field=field)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{field} has a non-string key {key!r}; JSON keys are strings")
            check_text(key, field=f"{field} key")
            check_json(item, field=f"{field}[{key!r}]")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_json(item, field=f"{field}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{field} is {value!r}; JSON has no NaN or infinity")
    elif value is not None and not isinstance(value, int | float):
        raise ValueError(
            f"{field} is a {type(value).__name__} ({value!r}), not a JSON value; "
            "use a dict, list, str, int, float, bool or None"
        )
    return value


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
