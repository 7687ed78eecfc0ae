"""PhantomWiki universes: the committed fixtures as redstring documents, entities and relations.

Each fixture (`bench/data/phantomwiki/<name>.json.gz`, made by
`scripts/make_phantomwiki.py`; see ADR 0092) is one fictional universe: an
article per person, the facts the articles state, and 200 template
questions with their answers, hop count and gold supporting articles.

- `dev`: seed 3, the recipe of RESEARCH.md (509 articles). Tune on it.
- `heldout-500`, `heldout-1000`: other seeds (508 and 1,014 articles), their
  questions reworded by generic rules and plain synonyms ("pal" for
  "friend"). Judge on them; never tune on them.

`Universe.documents`, `.entities` and `.relationships` build redstring
objects for a tenant with no LLM and no randomness: every id is a uuid5 (or,
for documents, a readable string) of the universe's name and the fact, so
two loads agree, and two tenants get the same ids (forced collisions).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID, uuid5

from redstring import (
    Entity,
    EntityId,
    ExtractionMethod,
    Relationship,
    RelationshipId,
    SourceDocument,
    SourceId,
    TenantId,
    normalize_name,
)

DATA = Path(__file__).resolve().parent / "data" / "phantomwiki"
UNIVERSES = ("dev", "heldout-500", "heldout-1000")
#: The uuid5 namespace of every entity and relationship id made here.
NAMESPACE = UUID("6d1c3f0e-2b9a-5e47-9c1d-70686e746f6d")
PERSON, OCCUPATION, HOBBY = "person", "occupation", "hobby"


@dataclass(frozen=True)
class Question:
    """One question with its answers and the articles that support it.

    `gold` is the trace set (article titles): the names quoted in the Prolog
    query plus every person bound in its solution traces. `hops` is the
    number of clauses of the query (1 to 4). `wording` is `"template"` on
    `dev`, else the rewording form used (`template` then holds the original).
    """

    id: str
    question: str
    answers: tuple[str, ...]
    hops: int
    gold: frozenset[str]
    answer_is_person: bool
    kind: int
    difficulty: int
    aggregation: bool
    wording: str
    template: str
    synonyms: tuple[str, ...]


@dataclass(frozen=True)
class Person:
    """A person of the universe, the subject of one article."""

    name: str
    dob: str
    gender: str
    occupations: tuple[str, ...]
    hobbies: tuple[str, ...]


@dataclass(frozen=True)
class Fact:
    """A stated relation: `subject --type--> object` (a person, an occupation or a hobby)."""

    subject: str
    type: str
    object: str


class Universe:
    """One fixture, read once; builds redstring objects for any tenant."""

    def __init__(self, content: dict[str, Any]) -> None:
        self.name: str = content["name"]
        self.seed: int = content["seed"]
        self.articles: dict[str, str] = {a["title"]: a["text"] for a in content["articles"]}
        self.people = tuple(
            Person(
                name=p["name"],
                dob=p["dob"],
                gender=p["gender"],
                occupations=tuple(p["occupations"]),
                hobbies=tuple(p["hobbies"]),
            )
            for p in content["people"]
        )
        self.facts = tuple(
            dict.fromkeys(Fact(f["subject"], f["type"], f["object"]) for f in content["relations"])
        )
        self.questions = tuple(
            Question(
                id=q["id"],
                question=q["question"],
                answers=tuple(q["answers"]),
                hops=q["hops"],
                gold=frozenset(q["gold"]),
                answer_is_person=q["answer_is_person"],
                kind=q["type"],
                difficulty=q["difficulty"],
                aggregation=q["aggregation"],
                wording=q["wording"],
                template=q.get("template", q["question"]),
                synonyms=tuple(q.get("synonyms", ())),
            )
            for q in content["questions"]
        )
        self._titles = {self.source_id(title): title for title in self.articles}

    def source_id(self, title: str) -> SourceId:
        """The document id of the article titled `title`: `<universe>/<title>`."""
        return SourceId(f"{self.name}/{title}")

    def title_of(self, source_id: str) -> str:
        """The title of the article whose document id is `source_id`."""
        try:
            return self._titles[SourceId(source_id)]
        except KeyError:
            raise ValueError(f"no article of {self.name!r} has the id {source_id!r}") from None

    def entity_id(self, entity_type: str, name: str) -> EntityId:
        """The id of the entity of type `entity_type` named `name` (any tenant)."""
        return EntityId(uuid5(NAMESPACE, f"{self.name}\x00{entity_type}\x00{name}"))

    def documents(self, tenant_id: TenantId | None = None) -> list[SourceDocument]:
        """One `SourceDocument` per article, in title order, the title kept.

        A `SourceDocument` carries no tenant (`import_documents` takes it);
        `tenant_id` is accepted so the three builders read alike, and unused.
        """
        del tenant_id
        return [
            SourceDocument(id=self.source_id(title), text=text, title=title)
            for title, text in self.articles.items()
        ]

    def entities(self, tenant_id: TenantId) -> list[Entity]:
        """People (with `dob` and `gender`), then occupations and hobbies, each once."""
        found = [
            self._entity(
                tenant_id,
                PERSON,
                person.name,
                {"dob": person.dob, "gender": person.gender},
                self.source_id(person.name),
            )
            for person in self.people
        ]
        for entity_type, values in (
            (OCCUPATION, sorted({v for p in self.people for v in p.occupations})),
            (HOBBY, sorted({v for p in self.people for v in p.hobbies})),
        ):
            found += [self._entity(tenant_id, entity_type, value, {}, None) for value in values]
        return found

    def relationships(self, tenant_id: TenantId) -> list[Relationship]:
        """Every stated relation, from its subject's article, typed as the fact says."""
        found = []
        for fact in self.facts:
            target = fact.type if fact.type in (OCCUPATION, HOBBY) else PERSON
            found.append(
                Relationship(
                    id=RelationshipId(
                        uuid5(
                            NAMESPACE,
                            "\x00".join((self.name, fact.subject, fact.type, fact.object)),
                        )
                    ),
                    tenant_id=tenant_id,
                    source_entity_id=self.entity_id(PERSON, fact.subject),
                    target_entity_id=self.entity_id(target, fact.object),
                    relationship_type=fact.type,
                    source_id=self.source_id(fact.subject),
                    extraction_method=ExtractionMethod.MANUAL,
                )
            )
        return found

    def _entity(
        self,
        tenant_id: TenantId,
        entity_type: str,
        name: str,
        properties: dict[str, Any],
        source_id: SourceId | None,
    ) -> Entity:
        return Entity(
            id=self.entity_id(entity_type, name),
            tenant_id=tenant_id,
            name=name,
            normalized_name=normalize_name(name),
            entity_type=entity_type,
            source_id=source_id,
            properties=properties,
            extraction_method=ExtractionMethod.MANUAL,
            confidence=1.0,
        )


@cache
def _read(name: str) -> dict[str, Any]:
    with gzip.open(DATA / f"{name}.json.gz", "rt", encoding="utf-8") as handle:
        content: dict[str, Any] = json.load(handle)
    return content


def load_universe(name: str) -> Universe:
    """The committed universe `name`, one of `UNIVERSES`.

    Raises:
        ValueError: `name` is not one of `UNIVERSES`.
    """
    if name not in UNIVERSES:
        raise ValueError(f"unknown PhantomWiki universe {name!r}; known: {', '.join(UNIVERSES)}")
    return Universe(_read(name))
