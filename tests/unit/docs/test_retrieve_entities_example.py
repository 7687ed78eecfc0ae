"""The retrieval example runs, and says what the how-to claims it says."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs"
EXAMPLE = DOCS / "examples" / "retrieve_entities.py"
HOW_TO = DOCS / "how-to" / "retrieve-entities.md"


def _run() -> dict[str, Any]:
    namespace = runpy.run_path(str(EXAMPLE))
    result: dict[str, Any] = asyncio.run(namespace["main"]())
    return result


def test_the_lexical_channel_reaches_every_query_that_shares_letters_with_the_name() -> None:
    """Each of these shares at least two name trigrams with "Charles Babbage".

    The katakana spelling shares them through its romanization.

    The surname alone, a title in front, a nickname and a reordering share
    no prefix or soundex key with it; the name index reaches them anyway.
    """
    reached = _run()["reached"]
    assert {query for query, hit in reached.items() if hit} == {
        "Charles Babbage",
        "Charles Babage",
        "Chrales Babbage",
        "Chuck Babbage",
        "Babbage",
        "Mr Charles Babbage",
        "Babbage, Charles",
        "チャールズ・バベッジ",
    }


def test_the_lexical_channel_cannot_reach_a_description() -> None:
    """The documented limitation: no letter in common, so the channel abstains."""
    assert _run()["reached"]["father of the computer"] is False


def test_only_the_channels_with_a_semantic_half_embed_the_query() -> None:
    assert _run()["embed_calls"] == {"semantic": 1, "lexical": 0, "hybrid": 1}


def test_the_type_filter_wins_over_an_exact_name_on_both_channels() -> None:
    """The query is a person's exact name; only organizations may come back.

    The lexical channel reaches "Charles Babbage" and the semantic channel
    ranks every vector, so each channel must apply the filter for this to hold.
    """
    assert sorted(_run()["organizations"]) == ["ACME Corporation", "Zebra Holdings"]


def test_the_how_to_shows_what_the_example_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """The output on the page is the output of the file, not a copy that drifted."""
    _run()
    printed = capsys.readouterr().out.strip()
    assert printed
    assert printed in HOW_TO.read_text()
