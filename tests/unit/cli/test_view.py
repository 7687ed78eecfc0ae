"""`redstring view`: one offline page, rendered in a real headless browser (Debian's chromium).

The browser test never skips: CI installs chromium (`.ci/run`), and a
machine without it fails the test, saying so.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from typing import TYPE_CHECKING

import pytest

from redstring import InMemoryGraphStore
from redstring.cli.view import neighbourhood_page, page
from tests.factories import TENANT, make_entity, make_relationship
from tests.unit.cli.test_commands import imported, run
from tests.unit.cli.test_mcp import NOTE

if TYPE_CHECKING:
    from pathlib import Path

#: The first two colours of the page's palette, as RGB: what a node of each type is filled with.
FIRST_COLOURS = {(0x4E, 0x79, 0xA7), (0xF2, 0x8E, 0x2B)}


def chromium() -> str:
    found = shutil.which("chromium")
    assert found is not None, "chromium is missing: apt-get install -y chromium (as .ci/run does)"
    return found


def browse(page_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    profile = page_path.parent / "profile"
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--window-size=1000,700", *arguments,
         page_path.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip


def pixels(png: bytes) -> list[tuple[int, int, int]]:
    """The RGB pixels of an 8-bit RGB or RGBA PNG, unfiltered."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks, header = 8, b"", b""
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind, body = png[offset + 4 : offset + 8], png[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks += body
        offset += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8
    assert colour in (2, 6)
    size = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(chunks), width * size
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            left = line[x - size] if x >= size else 0
            up, corner = previous[x], previous[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up),
                              (abs(guess - corner), 2, corner))[2]  # fmt: skip
                line[x] = (line[x] + nearest) & 0xFF
        rows.append(line)
        previous = line
    return [tuple(row[x : x + 3]) for row in rows for x in range(0, stride, size)]  # type: ignore[misc]


@pytest.fixture
def page_file(tmp_path: Path) -> tuple[Path, int]:
    from tests.unit.cli.test_mcp import GRAPH

    source = tmp_path / "graph.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in GRAPH), encoding="utf-8")
    db = tmp_path / "graph.db"
    imported(source, "--db", db)
    notes = tmp_path / "notes.jsonl"
    notes.write_text(json.dumps(NOTE) + "\n", encoding="utf-8")
    assert run("add", notes, "--db", db)[0] == 0
    out = tmp_path / "page.html"
    status, said, err = run("view", "Charles Babbage", "--db", db, "--out", out)
    assert (status, said, err) == (0, f"wrote {out}\n", "")
    return out, 3


def test_the_page_draws_every_node_and_labels_every_edge_in_a_browser(
    page_file: tuple[Path, int],
) -> None:
    path, nodes = page_file
    dom = browse(path, "--dump-dom", "--virtual-time-budget=5000").stdout
    assert f'data-drawn="{nodes}"' in dom
    assert len(re.findall(r'<circle class="node', dom)) == nodes
    assert len(re.findall(r'<line class="edge"', dom)) == 2
    assert re.findall(r'<text class="edge-label"[^>]*>([^<]*)</text>', dom) == ["knows", "designed"]
    assert sorted(re.findall(r'<text class="node-label"[^>]*>([^<]*)</text>', dom)) == [
        "Ada Lovelace", "Analytical Engine", "Charles Babbage"]  # fmt: skip
    assert "<h2>Charles Babbage (person)</h2>" in dom
    # The chosen node's passages: one per mention, each with its document and offsets.
    assert re.findall(r'<div class="source">([^<]*)</div>', dom) == [
        "Engines \u2014 engines 0\u201315", "Engines \u2014 engines 79\u201394"]  # fmt: skip
    text = str(NOTE["text"])
    assert re.findall(r'<div class="snippet">([^<]*)</div>', dom) == [
        text[: text.index(" building")] + "\u2026",
        text,
    ]


def test_a_screenshot_of_the_page_is_not_blank(page_file: tuple[Path, int]) -> None:
    path, _ = page_file
    shot = path.parent / "shot.png"
    browse(path, f"--screenshot={shot}", "--virtual-time-budget=5000")
    seen = pixels(shot.read_bytes())
    assert len(seen) == 1000 * 700
    assert len(set(seen)) > 20
    assert set(seen) >= FIRST_COLOURS


async def test_the_page_holds_everything_it_needs_and_no_name_can_end_its_script() -> None:
    hostile = make_entity(name="</script><script>alert(1)</script>", properties={"x": "&amp;"})
    friend = make_entity(name="Friend\u2028", entity_type="ship")
    graph = InMemoryGraphStore()
    await graph.upsert_entities([hostile, friend])
    await graph.upsert_relationships([make_relationship(hostile, friend)])

    html = await neighbourhood_page(graph, TENANT, str(hostile.id), depth=1)

    assert "<script src" not in html
    assert "<link" not in html
    assert "https://" not in html
    assert re.findall(r"http://[^\"]*", html) == ["http://www.w3.org/2000/svg"]
    assert html.count("</script>") == 2
    payload = html.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    data = json.loads(payload)
    assert [node["name"] for node in data["nodes"]] == [hostile.name, friend.name]
    assert data["nodes"][0]["properties"] == {"x": "&amp;"}
    assert "<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; · redstring</title>" in html
    assert page(friend, [friend], []).count("__DATA__") == 0


def test_view_refuses_a_missing_entity_and_a_missing_directory(tmp_path: Path) -> None:
    from tests.unit.cli.test_mcp import GRAPH

    source = tmp_path / "graph.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in GRAPH), encoding="utf-8")
    db = tmp_path / "graph.db"
    imported(source, "--db", db)
    status, _, err = run("view", "Nobody", "--db", db, "--out", tmp_path / "p.html")
    assert (status, err) == (1, "redstring view: no entity named 'Nobody' in this tenant\n")
    assert not (tmp_path / "p.html").exists()
    status, _, err = run("view", "Ada Lovelace", "--db", db, "--out", tmp_path / "no" / "p.html")
    assert (status, err) == (1, f"redstring view: no such directory: {tmp_path / 'no'}\n")


async def test_a_node_holds_at_most_its_first_passages_and_counts_the_rest() -> None:
    from redstring import InMemoryChunkStore, Mention
    from redstring.cli.view import NODE_PASSAGES
    from redstring.testing.factories import make_chunk

    ada = make_entity(name="Ada Lovelace")
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    await graph.upsert_entities([ada])
    said = [
        make_chunk("Ada Lovelace wrote.", source_id=f"doc-{n:02d}")
        for n in range(NODE_PASSAGES + 3)
    ]
    await chunks.put_chunks(said)
    await chunks.put_mentions(
        [
            Mention(tenant_id=TENANT, chunk_id=each.id, entity_id=ada.id, start=0, end=12)
            for each in said
        ]
    )
    html = await neighbourhood_page(graph, TENANT, "Ada Lovelace", depth=1, chunks=chunks)
    payload = html.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    [node] = json.loads(payload)["nodes"]
    assert node["passage_count"] == NODE_PASSAGES + 3
    assert [each["source_id"] for each in node["passages"]] == [
        f"doc-{n:02d}" for n in range(NODE_PASSAGES)
    ]
