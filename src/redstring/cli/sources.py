"""Reading the documents `redstring add` is given: text or Markdown files, or JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import ValidationError

from redstring.cli.rows import STDIN, RowError, decode
from redstring.domain.ids import SourceId
from redstring.domain.source import SourceDocument

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import BinaryIO

#: Suffixes read as JSON Lines, one document a line; any other file is one document.
JSON_LINES_SUFFIXES: Final = frozenset({".jsonl", ".ndjson"})
#: The keys of a JSON Lines document that are not metadata.
_FIELDS: Final = ("id", "text", "title")
#: The id of a document read as text from standard input.
STDIN_ID: Final = "stdin"


def read_sources(files: Sequence[str], *, stdin: BinaryIO) -> list[SourceDocument]:
    """Every document of `files`, read and checked before anything is written.

    A `.jsonl` or `.ndjson` file (or standard input, `-`, starting with `{`)
    holds one JSON object a line: `text` (required), `id` (default
    `FILE:LINE`) and `title`, any other key kept as metadata. Any other file
    is one document whose id is the path as given and whose title is its
    first Markdown heading, else its file name.

    Raises:
        RowError: a file is missing, not UTF-8, blank, or a line is not a
            document; or two documents share an id. Names the file and line.
    """
    documents: list[SourceDocument] = []
    seen: dict[str, str] = {}
    for name in files:
        text = decode(_read(name, stdin), source=name)
        is_lines = Path(name).suffix.lower() in JSON_LINES_SUFFIXES or (
            name == STDIN and text.lstrip()[:1] == "{"
        )
        batch = _json_lines(name, text) if is_lines else [_text_document(name, text)]
        for where, document in batch:
            if document.id in seen:
                raise RowError(
                    source=where,
                    line=None,
                    reason=f"document id {document.id!r} is also used at {seen[document.id]}",
                )
            seen[document.id] = where
            documents.append(document)
    return documents


def _read(name: str, stdin: BinaryIO) -> bytes:
    if name == STDIN:
        return stdin.read()
    path = Path(name)
    if path.is_dir():
        raise RowError(source=name, line=None, reason="is a directory, not a file")
    if not path.is_file():
        raise RowError(source=name, line=None, reason="no such file")
    return path.read_bytes()


def _text_document(name: str, text: str) -> tuple[str, SourceDocument]:
    if not text.strip():
        raise RowError(source=name, line=None, reason="is blank: there is no text to add")
    identifier = STDIN_ID if name == STDIN else name
    title = _heading(text) or (STDIN_ID if name == STDIN else Path(name).name)
    return name, _document(name, None, id=identifier, text=text, title=title, metadata={})


def _heading(text: str) -> str | None:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# ") and stripped[2:].strip():
            return stripped[2:].strip()
    return None


def _json_lines(name: str, text: str) -> list[tuple[str, SourceDocument]]:
    documents: list[tuple[str, SourceDocument]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise RowError(source=name, line=number, reason="not a JSON object") from None
        if not isinstance(row, dict):
            raise RowError(source=name, line=number, reason="not a JSON object")
        text_value = row.get("text")
        if not isinstance(text_value, str) or not text_value.strip():
            reason = "has no text" if text_value is None else "text must be a non-blank string"
            raise RowError(source=name, line=number, reason=reason)
        for key in ("id", "title"):
            if key in row and not isinstance(row[key], str):
                raise RowError(
                    source=name,
                    line=number,
                    reason=f"{key} must be a string, got {type(row[key]).__name__}",
                )
        identifier = row.get("id", f"{name}:{number}")
        metadata = {key: value for key, value in row.items() if key not in _FIELDS}
        where = f"{name}:{number}"
        documents.append(
            (
                where,
                _document(
                    name,
                    number,
                    id=identifier,
                    text=text_value,
                    title=row.get("title"),
                    metadata=metadata,
                ),
            )
        )
    if not documents:
        raise RowError(source=name, line=None, reason="is blank: there is no document to add")
    return documents


def _document(
    name: str,
    line: int | None,
    *,
    id: str,
    text: str,
    title: str | None,
    metadata: dict[str, object],
) -> SourceDocument:
    try:
        return SourceDocument(id=SourceId(id), text=text, title=title, metadata=metadata)
    except ValidationError as exc:
        reason = "; ".join(error["msg"] for error in exc.errors())
        raise RowError(source=name, line=line, reason=reason) from None
