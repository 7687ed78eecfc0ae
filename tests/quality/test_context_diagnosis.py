"""`bench/context.py --diagnose` counts a gold article the graph scored as scored, however low."""

from __future__ import annotations

import random

import pytest
from bench.context import UNBOUNDED, _where, diagnose, stores
from bench.phantomwiki import Universe

from redstring import ContextSettings

HUB = "Hub Zorvath"
SPOKES = 149


def _names() -> list[str]:
    """`SPOKES` two-word names of random letters, far apart in spelling."""
    pick = random.Random(7)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    found: dict[str, None] = {}
    while len(found) < SPOKES:
        word = "".join(pick.choice(consonants) + pick.choice(vowels) for _ in range(4))
        found[f"{word.title()} Quillan"] = None
    return list(found)


def _star() -> Universe:
    """A hub with `SPOKES` friends (the graph says so, their articles do not); one question.

    The question's gold set is every article, so 50 of them rank below 100.
    """
    spokes = _names()
    people = [HUB, *spokes]
    articles = [
        {"title": HUB, "text": f"# {HUB}\n\n## Friends\nThe friends of {HUB} are many."},
        *(
            {"title": name, "text": f"# {name}\n\n## Attributes\nThe gender of {name} is female."}
            for name in spokes
        ),
    ]
    return Universe(
        {
            "name": "star",
            "seed": 0,
            "articles": articles,
            "people": [
                {
                    "name": name,
                    "dob": "0200-01-01",
                    "gender": "female",
                    "occupations": [],
                    "hobbies": [],
                }
                for name in people
            ],
            "relations": [{"subject": name, "type": "friend", "object": HUB} for name in spokes],
            "questions": [
                {
                    "id": "q0",
                    "question": f"Who is the friend of {HUB}?",
                    "answers": spokes,
                    "hops": 1,
                    "gold": people,
                    "answer_is_person": True,
                    "type": 5,
                    "difficulty": 1,
                    "aggregation": False,
                    "wording": "template",
                }
            ],
        }
    )


async def test_a_gold_article_the_walk_scored_below_rank_100_is_not_counted_unreached() -> None:
    universe = _star()
    chunks, graph = await stores(universe)
    unbounded = await _where(universe, chunks, graph, UNBOUNDED)
    # 150 gold articles, all scored by the walk: 5, 5, 90 above rank 100, 50 below it.
    assert unbounded["no graph score"] == 0.0
    assert unbounded["ranked below 100"] == 50 / 150
    bounded = await _where(universe, chunks, graph, ContextSettings(reach=20))
    assert bounded["no graph score"] > 0.0
    rows = await diagnose(universe, chunks, graph)
    assert set(rows) == {"fused", "fused, walk unbounded"}
    assert rows["fused, walk unbounded"] == unbounded
    shares = [value for key, value in unbounded.items() if key != "BM25 top 5, fused not"]
    assert sum(shares) == pytest.approx(1.0)
