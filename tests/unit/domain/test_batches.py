import pytest

from redstring.domain.batches import require_all


def test_a_sequence_of_the_kind_is_returned_unchanged() -> None:
    items = ["a", "b"]
    assert require_all(items, str, name="keys") is items


def test_a_bare_string_or_a_non_sequence_is_refused() -> None:
    for bad in ("ab", b"ab", 3, {"a"}):
        with pytest.raises(ValueError, match=r"^keys must be a sequence of str"):
            require_all(bad, str, name="keys")


def test_the_first_item_of_another_kind_is_named_by_index() -> None:
    with pytest.raises(ValueError, match=r"^entities\[1\] is not an int: 'x'$"):
        require_all([1, "x"], int, name="entities")
