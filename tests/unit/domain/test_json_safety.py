import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.json_safety import check_json, check_text, copy_json, is_plain_json

#: Storable JSON: hypothesis text leaves out surrogates, so drop NUL too.
safe_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
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


def nested(depth: int) -> Any:
    """A dict holding lists `depth` containers deep, built without recursion."""
    value: Any = []
    for _ in range(depth - 2):
        value = [value]
    return {"deep": value}


def test_nesting_up_to_the_limit_is_accepted() -> None:
    value = nested(64)
    assert check_json(value, field="properties") is value


@pytest.mark.parametrize("depth", [65, 3_000, 100_000])
def test_nesting_past_the_limit_is_refused_without_recursion_error(depth: int) -> None:
    with pytest.raises(ValueError, match=r"^properties.* nests deeper than 64 levels$"):
        check_json(nested(depth), field="properties")


@pytest.mark.parametrize("number", [2**63 - 1, -(2**63), 2**53 + 1])
def test_integers_in_the_signed_64_bit_range_are_accepted(number: int) -> None:
    assert check_json({"n": number}, field="properties") == {"n": number}


@pytest.mark.parametrize(
    "number", [2**63, -(2**63) - 1, 10**5000], ids=["2**63", "-2**63-1", "10**5000"]
)
def test_integers_past_the_signed_64_bit_range_are_refused_naming_the_path(number: int) -> None:
    with pytest.raises(ValueError, match=r"^properties\['n'\] is an integer outside"):
        check_json({"n": number}, field="properties")


def test_a_payload_past_the_size_limit_is_refused() -> None:
    assert check_json({"text": "x" * 999_990}, field="metadata")
    with pytest.raises(ValueError, match=r"^metadata is larger than the limit of 1000000"):
        check_json({"text": "x" * 1_000_000}, field="metadata")


def accepted(value: Any) -> bool:
    try:
        check_json(value, field="properties")
    except ValueError:
        return False
    return True


hostile_leaves = (
    json_values
    | st.sampled_from([2**63, -(2**63) - 1, math.nan, math.inf, "\x00", "\ud800", (1,), {1}])
    | st.builds(object)
)
hostile_json = st.recursive(
    hostile_leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(safe_text | st.sampled_from(["\ud800", "\x00"]), children, max_size=3)
        | st.dictionaries(st.integers(), children, max_size=1)
    ),
    max_leaves=12,
)


@given(st.dictionaries(safe_text, hostile_json, max_size=4))
@example({})
@example({"n": 2**63 - 1, "m": -(2**63), "f": 1.5, "b": True, "z": None, "s": "Ada"})
@example({"n": 2**63})
@example({"f": math.nan})
@example({"s": "\ud800"})
@example({"\x00": 1})
@example({"t": (1,)})
@example({"deep": nested(64)["deep"]})
@example({"deep": nested(65)["deep"]})
@example({"k": {1: "int key"}})
@example({"text": "x" * 999_990})
@example({"text": "x" * 999_995})
def test_the_quick_answer_agrees_with_check_json(value: dict[str, Any]) -> None:
    """`is_plain_json` is the silent fast path stores use; it must never disagree."""
    assert is_plain_json(value) == accepted(value)


def test_the_quick_answer_refuses_what_is_not_a_plain_dict() -> None:
    assert not is_plain_json([1])
    assert not is_plain_json("text")


def test_dicts_nested_past_the_limit_are_refused_too() -> None:
    value: Any = {}
    for _ in range(64):
        value = {"d": value}
    with pytest.raises(ValueError, match=r"nests deeper than 64 levels$"):
        check_json(value, field="properties")
    assert not is_plain_json(value)
