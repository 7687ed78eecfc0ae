"""The sliding-window chunker covers the text in bounded, advancing, overlapping windows."""

from __future__ import annotations

import itertools
from typing import SupportsIndex

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.extraction.chunking import Chunk, Chunker, SlidingWindowChunker

#: Few letters and plenty of whitespace, so that cuts land on every kind of boundary.
texts = st.text(st.sampled_from("ab \n\t"), max_size=120)


@st.composite
def settings(draw: st.DrawFn) -> tuple[int, int, int]:
    size = draw(st.integers(min_value=1, max_value=30))
    overlap = draw(st.integers(min_value=0, max_value=size - 1))
    min_size = draw(st.integers(min_value=0, max_value=size))
    return size, overlap, min_size


def chunk(text: str, *, size: int, overlap: int, min_size: int) -> list[Chunk]:
    return SlidingWindowChunker(size=size, overlap=overlap, min_size=min_size).chunk(text)


def test_the_sliding_window_chunker_is_a_chunker() -> None:
    assert isinstance(SlidingWindowChunker(), Chunker)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"size": 0}, "size must be >= 1, got 0"),
        ({"size": -5}, "size must be >= 1, got -5"),
        ({"size": 10, "overlap": 10}, "got 10"),
        ({"size": 10, "overlap": -1}, "got -1"),
        ({"size": 10, "overlap": 0, "min_size": 11}, "got 11"),
        ({"size": 10, "overlap": 0, "min_size": -1}, "got -1"),
    ],
)
def test_a_size_overlap_or_min_size_out_of_range_is_refused_naming_the_value(
    arguments: dict[str, int], named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        SlidingWindowChunker(**arguments)


def test_the_widest_valid_settings_are_accepted() -> None:
    SlidingWindowChunker(size=1, overlap=0, min_size=1)
    SlidingWindowChunker(size=10, overlap=9, min_size=10)


def test_an_empty_text_has_no_chunks() -> None:
    assert SlidingWindowChunker().chunk("") == []


def test_a_text_no_longer_than_the_window_is_one_chunk() -> None:
    text = "x" * 4000

    assert SlidingWindowChunker().chunk(text) == [Chunk(index=0, text=text, start=0, end=4000)]


def test_a_window_is_cut_just_after_its_last_whitespace() -> None:
    chunks = chunk("alpha beta gamma delta", size=12, overlap=0, min_size=0)

    assert [each.text for each in chunks] == ["alpha beta ", "gamma delta"]


def test_a_window_ending_just_before_whitespace_is_kept_whole() -> None:
    chunks = chunk("alpha beta gamma", size=10, overlap=0, min_size=0)

    assert [each.text for each in chunks] == ["alpha beta", " gamma"]


def test_whitespace_that_would_leave_a_chunk_shorter_than_min_size_is_not_used() -> None:
    chunks = chunk("ab cdefghijklmn", size=8, overlap=0, min_size=4)

    assert [each.text for each in chunks] == ["ab cdefg", "hijklmn"]


def test_whitespace_exactly_at_min_size_is_used() -> None:
    chunks = chunk("abc defghijklmnop", size=8, overlap=0, min_size=4)

    assert [each.text for each in chunks] == ["abc ", "defghijk", "lmnop"]


def test_a_text_without_whitespace_is_cut_at_every_window_end() -> None:
    chunks = chunk("abcdefghijk", size=4, overlap=1, min_size=0)

    assert [(each.start, each.end) for each in chunks] == [(0, 4), (3, 7), (6, 10), (9, 11)]


def test_each_chunk_starts_overlap_characters_before_the_previous_end() -> None:
    chunks = chunk("one two three four five six", size=10, overlap=3, min_size=0)

    assert all(later.start == earlier.end - 3 for earlier, later in itertools.pairwise(chunks))
    assert chunks[-1].end == 27


def test_a_remainder_shorter_than_min_size_joins_the_previous_chunk() -> None:
    chunks = chunk("abcdefghij" + "kl", size=10, overlap=0, min_size=3)

    assert chunks == [Chunk(index=0, text="abcdefghijkl", start=0, end=12)]


def test_a_remainder_of_exactly_min_size_is_its_own_chunk() -> None:
    chunks = chunk("abcdefghij" + "klm", size=10, overlap=0, min_size=3)

    assert [(each.start, each.end) for each in chunks] == [(0, 10), (10, 13)]


@pytest.mark.parametrize(
    ("index", "text", "start", "end"),
    [(-1, "a", 0, 1), (0, "a", -1, 0), (0, "", 2, 1), (0, "abc", 0, 2)],
)
def test_a_chunk_whose_offsets_do_not_fit_its_text_is_refused(
    index: int, text: str, start: int, end: int
) -> None:
    with pytest.raises(ValueError, match=r"must|characters"):
        Chunk(index=index, text=text, start=start, end=end)


@given(texts, settings())
@example("", (1, 0, 0))
@example("a", (1, 0, 1))
@example("ab", (1, 0, 1))
@example("abababab", (3, 2, 3))
@example("a a a a a a a", (4, 3, 0))
@example("          ", (3, 1, 3))
@example("aaaaaaaaaa", (5, 4, 5))
def test_chunks_cover_the_text_in_order_and_each_advances(
    text: str, setting: tuple[int, int, int]
) -> None:
    size, overlap, min_size = setting
    chunks = chunk(text, size=size, overlap=overlap, min_size=min_size)

    if not text:
        assert chunks == []
        return
    assert [each.index for each in chunks] == list(range(len(chunks)))
    assert all(each.text == text[each.start : each.end] for each in chunks)
    assert chunks[0].start == 0
    assert chunks[-1].end == len(text)
    for earlier, later in itertools.pairwise(chunks):
        assert later.start == earlier.end - overlap  # no gap: every character is covered
        assert later.start > earlier.start
        assert later.end > earlier.end


@given(texts, settings())
@example("aaaaaaaaaaaa", (10, 0, 3))
@example("aaaaaaaaaaaaa", (10, 0, 3))
@example("a", (1, 0, 1))
def test_only_the_last_chunk_exceeds_size_and_never_by_min_size(
    text: str, setting: tuple[int, int, int]
) -> None:
    size, overlap, min_size = setting
    chunks = chunk(text, size=size, overlap=overlap, min_size=min_size)

    assert all(len(each.text) <= size for each in chunks[:-1])
    assert all(len(each.text) < size + max(min_size, 1) for each in chunks[-1:])


@given(texts, settings())
@example("a" * 12, (10, 0, 3))
@example("ab cdefghijklmn", (8, 0, 4))
def test_every_chunk_but_the_last_is_at_least_min_size(
    text: str, setting: tuple[int, int, int]
) -> None:
    size, overlap, min_size = setting
    chunks = chunk(text, size=size, overlap=overlap, min_size=min_size)

    assert all(len(each.text) >= min_size for each in chunks[:-1])


class SliceCountingText(str):
    """A text that adds up how many characters every slice of it copies."""

    copied = 0

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        piece = str.__getitem__(self, key)
        type(self).copied += len(piece)
        return piece


@pytest.mark.parametrize(("size", "overlap"), [(10, 0), (10, 9), (4000, 200)])
def test_chunking_copies_each_character_no_more_often_than_the_windows_overlap(
    size: int, overlap: int
) -> None:
    """Slicing the rest of the text for every window would copy it quadratically often."""
    SliceCountingText.copied = 0
    text = SliceCountingText(("word " * 40 + "x" * 600) * 50)

    chunks = SlidingWindowChunker(size=size, overlap=overlap, min_size=0).chunk(text)

    assert chunks[-1].end == len(text)
    assert SliceCountingText.copied == sum(len(each.text) for each in chunks)
    assert SliceCountingText.copied <= 2 * len(text) * size / (size - overlap)
