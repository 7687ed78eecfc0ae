"""Splitting a document into overlapping chunks a model can read in one call."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

#: Matches from a position up to and including the last whitespace before the end bound.
_THROUGH_LAST_WHITESPACE = re.compile(r".*\s", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A slice of a document: `text == document[start:end]`.

    `index` is the chunk's 0-based position in the chunker's output.

    Raises:
        ValueError: an offset or the index is negative, `end < start`, or
            `text` is not `end - start` characters long.
    """

    index: int
    text: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.index < 0:
            raise ValueError(f"index must be >= 0, got {self.index}")
        if not 0 <= self.start <= self.end:
            raise ValueError(
                f"offsets must satisfy 0 <= start <= end, got {self.start}, {self.end}"
            )
        if len(self.text) != self.end - self.start:
            raise ValueError(
                f"text is {len(self.text)} characters but the offsets span {self.end - self.start}"
            )


@runtime_checkable
class Chunker(Protocol):
    """Splits a text into chunks that together cover every character of it."""

    def chunk(self, text: str) -> list[Chunk]:
        """The chunks of `text`, in document order, indexed from 0; `[]` for `""`."""
        ...


class SlidingWindowChunker:
    """Windows of at most `size` characters, each overlapping the previous by `overlap`.

    A window that does not reach the end of the text is cut just after the
    last whitespace in it (or at the window end when the next character is
    whitespace), unless that would leave a chunk shorter than `min_size` or
    no longer than `overlap`; then it is cut at the window end. When the text
    after a chunk is shorter than `min_size`, it joins that chunk instead of
    forming its own, so only the last chunk may exceed `size`, and by less
    than `min_size`. Every chunk starts after the previous one, and the run
    is linear in the length of the text.

    Raises:
        ValueError: `size < 1`, `overlap` outside `0..size-1`, or `min_size`
            outside `0..size`.
    """

    def __init__(self, *, size: int = 4000, overlap: int = 200, min_size: int = 200) -> None:
        for argument, value in (("size", size), ("overlap", overlap), ("min_size", min_size)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{argument} must be an integer, got {value!r:.80}")
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        if not 0 <= overlap < size:
            raise ValueError(f"overlap must be in 0..{size - 1} (below size), got {overlap}")
        if not 0 <= min_size <= size:
            raise ValueError(f"min_size must be in 0..{size} (at most size), got {min_size}")
        self._size = size
        self._overlap = overlap
        self._min_size = min_size
        # The shortest chunk a whitespace cut may leave: at least min_size, and
        # longer than the overlap so that the next chunk starts further on.
        self._shortest_cut = max(min_size, overlap + 1)

    def chunk(self, text: str) -> list[Chunk]:
        """The chunks of `text`, in document order; `[]` for `""`.

        Raises:
            ValueError: `text` is not a string.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__} {text!r:.80}")
        length = len(text)
        chunks: list[Chunk] = []
        start = 0
        while start < length:
            end = self._cut(text, start)
            if length - end < self._min_size:
                end = length  # at most size + min_size - 1 characters
            chunks.append(Chunk(index=len(chunks), text=text[start:end], start=start, end=end))
            if end == length:
                break
            start = end - self._overlap
        return chunks

    def _cut(self, text: str, start: int) -> int:
        """Where the chunk starting at `start` ends, looking at `size + 1` characters at most."""
        window_end = start + self._size
        if window_end >= len(text):
            return len(text)
        lowest = start + self._shortest_cut - 1  # below window_end: shortest_cut <= size
        # Search through window_end inclusive: whitespace just past the window
        # means the window already ends on a word boundary.
        match = _THROUGH_LAST_WHITESPACE.match(text, lowest, window_end + 1)
        if match is None:
            return window_end
        return min(match.end(), window_end)
