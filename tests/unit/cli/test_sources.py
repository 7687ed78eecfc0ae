"""What `redstring add` reads: text, Markdown and JSON Lines, and errors naming the bad one."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pytest

from redstring.cli.rows import RowError
from redstring.cli.sources import read_sources

if TYPE_CHECKING:
    from pathlib import Path


def read(
    *files: str | Path, stdin: bytes = b""
) -> list[tuple[str, str, str | None, dict[str, object]]]:
    documents = read_sources([str(f) for f in files], stdin=io.BytesIO(stdin))
    return [(d.id, d.text, d.title, d.metadata) for d in documents]


def test_a_text_file_is_one_document_named_by_its_path_and_titled_by_its_file_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Oslo is cold.\n", encoding="utf-8")
    assert read(path) == [(str(path), "Oslo is cold.\n", "notes.txt", {})]


def test_a_markdown_file_is_titled_by_its_first_heading(tmp_path: Path) -> None:
    path = tmp_path / "rome.md"
    path.write_text(
        "Intro line\n#not a heading\n#  \n# Rome in spring\n\n# Later\n", encoding="utf-8"
    )
    assert read(path)[0][2] == "Rome in spring"


def test_json_lines_give_one_document_a_line_with_defaults_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": "a", "text": "Oslo.", "title": "A"}\n\n{"text": "Rome.", "lang": "en"}\n',
        encoding="utf-8",
    )
    assert read(path) == [
        ("a", "Oslo.", "A", {}),
        (f"{path}:3", "Rome.", None, {"lang": "en"}),
    ]


def test_standard_input_is_json_lines_when_it_starts_with_a_brace_and_text_otherwise() -> None:
    assert read("-", stdin=b'  {"id": "x", "text": "Oslo."}\n') == [("x", "Oslo.", None, {})]
    assert read("-", stdin=b"Oslo is cold.") == [("stdin", "Oslo is cold.", "stdin", {})]
    assert read("-", stdin=b"# Oslo\nis cold.")[0][2] == "Oslo"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param("blank.txt", b" \n\t", r"blank.txt: is blank", id="blank-text"),
        pytest.param("latin1.txt", b"caf\xe9", r"latin1.txt:1: not UTF-8 text", id="not-utf8"),
        pytest.param("d.jsonl", b'{"id": "a"}\n', r"d.jsonl:1: has no text", id="no-text"),
        pytest.param(
            "d.jsonl",
            b'{"id": "a", "text": "ok"}\n{"text": "  "}\n',
            r"d.jsonl:2: text must be a non-blank string",
            id="blank-text-field",
        ),
        pytest.param("d.jsonl", b'{"text": 7}\n', r"d.jsonl:1: text must be", id="text-number"),
        pytest.param(
            "d.jsonl",
            b'{"id": 7, "text": "x"}\n',
            r"d.jsonl:1: id must be a string",
            id="id-number",
        ),
        pytest.param(
            "d.jsonl", b'{"title": ["x"], "text": "x"}\n', r"title must be a string", id="title"
        ),
        pytest.param("d.jsonl", b"[1]\n", r"d.jsonl:1: not a JSON object", id="not-object"),
        pytest.param("d.jsonl", b"{oops\n", r"d.jsonl:1: not a JSON object", id="not-json"),
        pytest.param("d.jsonl", b"\n\n", r"d.jsonl: is blank", id="no-line"),
        pytest.param(
            "d.jsonl",
            b'{"id": " ", "text": "x"}\n',
            r"d.jsonl:1: .*id must not be blank",
            id="blank-id",
        ),
        pytest.param(
            "d.jsonl",
            b'{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
            r"d.jsonl:2: document id 'a' is also used at .*d.jsonl:1",
            id="repeated-id",
        ),
    ],
)
def test_bad_input_is_refused_naming_the_file_and_line(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    good = tmp_path / "good.txt"
    good.write_text("fine", encoding="utf-8")
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(RowError, match=message):
        read(good, path)


def test_a_missing_file_or_a_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(RowError, match=r"missing\.txt: no such file"):
        read(tmp_path / "missing.txt")
    with pytest.raises(RowError, match="is a directory"):
        read(tmp_path)


def test_the_same_id_from_two_files_is_refused(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"id": "x", "text": "one"}\n', encoding="utf-8")
    second.write_text('{"id": "x", "text": "two"}\n', encoding="utf-8")
    with pytest.raises(RowError, match=r"b.jsonl:1: document id 'x' is also used at .*a.jsonl:1"):
        read(first, second)
