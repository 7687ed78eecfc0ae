"""The README's main-job command: the demo imports real cities and finds them."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

DEMO = Path(__file__).resolve().parents[3] / "docs" / "examples" / "demo.py"
#: The most populous cities come first; Philadelphia is the 297th.
SUBSET = 300


def test_the_demo_shows_each_channel_doing_its_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run on the first 300 cities with the real local model, to stay quick."""
    namespace = runpy.run_path(str(DEMO))
    data = tmp_path / "cities.jsonl"
    lines = namespace["DATA"].read_text(encoding="utf-8").splitlines()[:SUBSET]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert namespace["run"](data, tmp_path / "demo.db") == 0

    printed = capsys.readouterr().out
    firsts = [line.split()[1] for line in printed.splitlines() if line.startswith("1  ")]
    # Philadelfia, Johanesburg (misspelled), capital of Japan, Peking (semantic),
    # Peking (lexical: Beijing's alias "Pekin" is one letter from it).
    assert firsts == ["Philadelphia", "Johannesburg", "Tokyo", "Beijing", "Beijing"]
    assert "embedded with local/multilingual-e5-small-q4" in printed
    # The notes: "Edo" links Tokyo, and "Leningrad" Saint Petersburg, by alias.
    assert "added 6 documents (6 passages)" in printed
    header = next(line.split() for line in printed.splitlines() if line.startswith("rank "))
    answers = [line.split() for line in printed.splitlines() if line.startswith("   1  ")]
    assert [row[header.index("source")] for row in answers] == ["edo", "leningrad"]
    assert answers[0][-2:] == ["Tokyo,", "Osaka"]  # Kyoto is past the first 300 cities
    assert "Saint Petersburg, Moscow" in " ".join(answers[1])
