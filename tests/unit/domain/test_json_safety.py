import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.json_safety import check_json, check_text, copy_json

#: Storable JSON: hypothesis text leaves out surrogates, so drop NUL too.
safe_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | safe_text,
    lambda children: st.lists(children) | st.dictionaries(safe_text, children),
    max_leaves=30,
)


def containers(value: Any) -> list[Any]:
    """Every dict and list reachable in `value`, outermost first."""
    found: list[Any] = []
    if isinstance(value, dict):
        found.append(value)
        for item in value.values():
            found.extend(containers(item))
    elif isinstance(value, list):
        found.append(value)
        for item in value:
            found.extend(containers(item))
    return found


@given(safe_text)
@example("")
@example("🧮 astral, paired")
@example("\ufffd\uffff")
def test_check_text_returns_storable_text_unchanged(value: str) -> None:
    assert check_text(value, field="name") is value


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("\x00", "NUL"),
        ("Ada\x00", "NUL"),
        ("\ud800", "unpaired surrogate"),
        ("x\udfff", "unpaired surrogate"),
        ("\ud83d\ude00", "unpaired surrogate"),
    ],
)
def test_check_text_rejects_unstorable_text_naming_the_field_and_the_problem(
    value: str, problem: str
) -> None:
    with pytest.raises(ValueError, match=rf"^title contains an? {problem}"):
        check_text(value, field="title")


@given(json_values)
def test_check_json_returns_storable_json_unchanged(value: Any) -> None:
    assert check_json(value, field="properties") is value


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("bad\x00", r"^properties contains"),
        ({"k": "bad\x00"}, r"^properties\['k'\] contains"),
        ({"bad\x00": 1}, r"^properties key contains"),
        ({"a": [1, {"b": ["ok", "\ud800"]}]}, r"^properties\['a'\]\[1\]\['b'\]\[1\] contains"),
        ([["\x00"]], r"^properties\[0\]\[0\] contains"),
    ],
    ids=["string", "value", "key", "deep", "nested-list"],
)
def test_check_json_rejects_unstorable_text_naming_its_path(value: Any, path: str) -> None:
    with pytest.raises(ValueError, match=path):
        check_json(value, field="properties")


@given(json_values)
@example({"a": [1, {"b": []}]})
@example([])
@example("leaf")
def test_copy_json_returns_an_equal_value(value: Any) -> None:
    assert copy_json(value) == value


@given(json_values)
@example({"a": [1, {"b": []}], "c": {}})
def test_copy_json_shares_no_container_with_the_original(value: Any) -> None:
    original_ids = {id(container) for container in containers(value)}

    copied = copy_json(value)

    assert not original_ids & {id(container) for container in containers(copied)}


def test_mutating_the_copy_leaves_the_original_untouched() -> None:
    original: dict[str, Any] = {"tags": ["a"], "nested": {"deep": [1, 2]}}

    copied = copy_json(original)
    copied["tags"].append("b")
    copied["nested"]["deep"].clear()
    copied["new"] = True

    assert original == {"tags": ["a"], "nested": {"deep": [1, 2]}}


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({"xs": ({"k": 1},)}, "tuple"),
        ({"tags": {"a"}}, "set"),
        ({"tags": frozenset({"a"})}, "frozenset"),
        ({"when": object()}, "object"),
        ({1: "int key"}, "non-string key"),
        ({"ratio": math.nan}, "nan"),
        ({"ratio": math.inf}, "inf"),
    ],
)
def test_anything_but_plain_json_is_rejected_so_no_copy_can_share_it(
    value: Any, named: str
) -> None:
    """A set or a dict inside a tuple would survive `copy_json` shared with the store."""
    with pytest.raises(ValueError, match=named):
        check_json(value, field="properties")
