"""What a context retrieval answers with: passages, the entities that matter, their relationships.

A `Context` is what a caller hands a language model: the passages ranked
for the query (`ScoredPassage`, each with the score of every channel that
ranked it), the entities linked from the query or reached through the
graph (`ScoredEntity`), the relationships among those entities, and the
paths by which a question's relation chain reached its answers
(`RelationPath`).

## Scores

`ScoredPassage.score` is the fused score: comparable within one context,
meaningless across queries. `bm25` is the chunk store's BM25 score, `graph`
the walk's score of the passage and `dense` the passage vector's
`VectorMatch` score; each is `None` when its channel did not rank the
passage (it was off, or the passage was not among its candidates).

## Budgets

`fit_to_budget` keeps passages best first while their text fits. A passage
that does not fit whole is trimmed at its last sentence end that fits (its
`end` moves back, so `text == source_text[start:end]` still holds), and
skipped when no sentence end fits; later, shorter passages may then still
fit. A passage is never cut mid-sentence.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from redstring.domain.chunk import Chunk, trusted_chunk
from redstring.domain.entity import Entity  # noqa: TC001 - pydantic needs it
from redstring.domain.json_safety import copy_json
from redstring.domain.relationship import Relationship  # noqa: TC001 - pydantic needs it
from redstring.domain.retrieval import ScoredEntity  # noqa: TC001 - pydantic needs it

#: A sentence ends at `.`, `!`, `?` or `…`, closing quotes and brackets included,
#: followed by whitespace or the end of the text; a line break also ends one.
_SENTENCE_END: Final = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*(?=\s|$)|\n")


class ContextSettings(BaseModel):
    """How a `ContextRetriever` walks the graph and fuses its channels.

    - `depth`: hops the walk spreads from the linked entities (`1..8`);
      `decay`: the share of its mass an entity hands on per hop.
    - `frontier`: the most entities expanded per hop; `reach`: the most
      walked entities whose passages are scored.
    - `about`: how much more a passage counts for the entity it is about
      (its document's title is the entity's name) than for one it mentions.
    - `graph_weight`, `dense_weight`: each channel's weight in the fusion,
      BM25's being 1.
    - `best_path`: an entity scores its best path from a seed (the
      product of `decay * weight` over the path's relationships), not the
      sum over every path, which lets a clique of relatives outscore the
      entity the query names; without it, `normalize` splits an entity's
      mass over its relationships in proportion to their weights (a
      personalized PageRank) rather than handing each `decay * weight` of
      it (a weighted expansion). `best_entity`: a passage scores its best
      entity rather than the sum of them.
      `forward_fit`: weight a relationship by its type's fit only when the
      walk goes from its source to its target, the other way by the floor.
    - `link_entities`: link the query's entities to seed the walk;
      `weight_edges`: weight relationships by how well their type fits the
      query (else every relationship weighs 1); `passage_seeds`: the most
      BM25 passages whose subject entities also seed the walk.
    - `subject_weight`: how much the context's passages rank the entities
      they are about: an entity scores its walk score over the walk's best
      plus `subject_weight` times the fused score, over the best, of the
      best passage about it (0: the walk alone ranks the entities).
    - `follow_chains`: follow the query's chain of relations ("the sister
      of the uncle of X", `read_relation_chain`) from the walk's seeds, and
      score every entity it binds `chain_weight` more, over the walk's
      best, than the walk alone does (ADR 0126); `chain_limit`: the most
      entities each step of a chain keeps.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    depth: int = Field(default=4, ge=1, le=8, strict=True)
    decay: float = Field(default=0.9, gt=0.0, le=1.0)
    frontier: int = Field(default=16, ge=1, le=10_000, strict=True)
    reach: int = Field(default=64, ge=1, le=10_000, strict=True)
    about: float = Field(default=4.0, ge=1.0, le=1_000.0)
    graph_weight: float = Field(default=1.25, ge=0.0, le=1_000.0)
    dense_weight: float = Field(default=1.0, ge=0.0, le=1_000.0)
    normalize: bool = False
    best_path: bool = True
    best_entity: bool = False
    forward_fit: bool = False
    link_entities: bool = True
    weight_edges: bool = True
    passage_seeds: int = Field(default=1, ge=0, le=100, strict=True)
    subject_weight: float = Field(default=2.0, ge=0.0, le=1_000.0)
    follow_chains: bool = True
    chain_weight: float = Field(default=30.0, ge=0.0, le=1_000.0)
    chain_limit: int = Field(default=64, ge=1, le=10_000, strict=True)


class ScoredPassage(BaseModel):
    """One passage a context retrieval ranked, with the score of each channel.

    `score` is fused (higher is better); `bm25`, `graph` and `dense` are
    each channel's own score, `None` where that channel did not rank it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk: Chunk
    score: float
    #: The chunk store's BM25 score (always `> 0`), or `None`.
    bm25: float | None = Field(default=None, gt=0.0)
    #: The graph walk's score (`>= 0`), or `None`.
    graph: float | None = Field(default=None, ge=0.0)
    #: The passage vector's `VectorMatch` score (`0..1`), or `None`.
    dense: float | None = Field(default=None, ge=0.0, le=1.0)


class RelationPath(BaseModel):
    """How a query's relation chain reached one of its answers, from an entity the query names.

    `entities` runs from the linked entity (or one joined to it that stood
    for it: the holder of a hobby) to the answer, through every entity
    between, those a derived relation crosses included (a cousin's parent
    and aunt); `relationships[i]` joins `entities[i]` and `entities[i + 1]`,
    pointing either way. All belong to one tenant.

    Raises:
        ValueError: `relationships` not one fewer than `entities`, a
            relationship that does not join the entities either side of
            it, or a part of another tenant.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: list[Entity] = Field(min_length=1)
    relationships: list[Relationship] = Field(default_factory=list)

    @model_validator(mode="after")
    def _joined(self) -> RelationPath:
        if len(self.relationships) != len(self.entities) - 1:
            raise ValueError(
                f"a path of {len(self.entities)} entities needs"
                f" {len(self.entities) - 1} relationships, got {len(self.relationships)}"
            )
        tenant = self.entities[0].tenant_id
        parts: list[Entity | Relationship] = [*self.entities, *self.relationships]
        for part in parts:
            if part.tenant_id != tenant:
                raise ValueError(f"{part.id} is of tenant {part.tenant_id}, not {tenant}")
        for index, edge in enumerate(self.relationships):
            ends = {edge.source_entity_id, edge.target_entity_id}
            pair = {self.entities[index].id, self.entities[index + 1].id}
            if ends != pair:
                raise ValueError(
                    f"relationship {edge.id} joins {sorted(map(str, ends))},"
                    f" not entities {index} and {index + 1} of the path"
                )
        return self


class Context(BaseModel):
    """The answer to one context query: passages, entities and relationships, best first.

    `entities` are the query's linked entities and those the graph walk
    reached, best first; `relationships` are the stored relationships
    whose two ends are both among `entities`; `paths` holds, for each of
    `entities` that the query's relation chain answers with, the path that
    reached it, in the order of `entities` (ADR 0128). All three are empty
    when the retriever holds no graph.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str
    passages: list[ScoredPassage] = Field(default_factory=list)
    entities: list[ScoredEntity] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    paths: list[RelationPath] = Field(default_factory=list)


def sentence_prefix(text: str, limit: int) -> int:
    """The length of the longest prefix of `text` within `limit` characters ending a sentence.

    `0` when no sentence ends within `limit`. Trailing whitespace is not
    counted as part of the prefix.
    """
    best = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > limit:
            break
        candidate = len(text[:end].rstrip())
        if candidate > 0:
            best = candidate
    return best


def trim_chunk(chunk: Chunk, length: int) -> Chunk:
    """`chunk` cut to its first `length` characters (`0 < length <= len(chunk.text)`)."""
    if length == len(chunk.text):
        return chunk
    return trusted_chunk(
        chunk.id,
        chunk.tenant_id,
        chunk.source_id,
        chunk.ordinal,
        chunk.text[:length],
        chunk.start,
        chunk.start + length,
        copy_json(chunk.metadata) if chunk.metadata else {},
    )


def fit_to_budget(passages: list[ScoredPassage], budget_chars: int) -> list[ScoredPassage]:
    """The passages, best first, whose texts together fit `budget_chars` characters.

    A passage that does not fit whole is trimmed at its last sentence end
    that fits, or skipped when none does; the scan goes on with the next
    passage while budget is left. See the module docstring.
    """
    kept: list[ScoredPassage] = []
    left = budget_chars
    for passage in passages:
        if left <= 0:
            break
        size = len(passage.chunk.text)
        if size <= left:
            kept.append(passage)
            left -= size
            continue
        length = sentence_prefix(passage.chunk.text, left)
        if length == 0:
            continue
        trimmed = trim_chunk(passage.chunk, length)
        kept.append(passage.model_copy(update={"chunk": trimmed}))
        left -= length
    return kept
