"""The `ChunkStore` contract, as a suite every adapter's tests subclass.

Subclass `ChunkStoreCompliance` in a `Test...` class and implement
`new_store()`; every test here then runs against that adapter. Search
results are compared with `==` against `reference_search`, a BM25 written
out in plain Python from literal constants, so every adapter returns the
same ranking and the same floats.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from redstring.domain.chunk import Chunk, Mention
from redstring.domain.exceptions import MissingChunkError
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.normalization import fold_name
from redstring.ports.chunk_store import ChunkStore
from redstring.testing.factories import OTHER_TENANT, TENANT, make_chunk
from redstring.testing.lifetime import LifetimeCompliance
from redstring.testing.support import run

if TYPE_CHECKING:
    from collections.abc import Iterable

#: Fixtures are per test, and each example runs its own event loop.
_UNCHECKED = [HealthCheck.function_scoped_fixture, HealthCheck.differing_executors]
PROPERTY_SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=_UNCHECKED)


def chunk_id(n: int) -> ChunkId:
    """A fixed id whose string order is its number's order."""
    return ChunkId(UUID(int=n))


def reference_search(
    chunks: Iterable[Chunk], query: str, *, k: int = 10
) -> list[tuple[ChunkId, float]]:
    """BM25 over `chunks` (one tenant), written out: Lucene's variant, k1 = 1.5, b = 0.75.

    Terms are the words of `fold_name`; a query term counts once; each
    chunk's score sums its terms' weights in sorted term order; ties break
    by `str(id)`.
    """
    documents = {chunk.id: Counter(fold_name(chunk.text).split()) for chunk in chunks}
    count = len(documents)
    if not count:
        return []
    total = sum(sum(terms.values()) for terms in documents.values())
    mean = total / count
    scores: dict[ChunkId, float] = {}
    for term in sorted(set(fold_name(query).split())):
        holding = [chunk for chunk, terms in documents.items() if term in terms]
        if not holding:
            continue
        df = len(holding)
        weight = math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        for chunk in holding:
            tf = float(documents[chunk][term])
            length = float(sum(documents[chunk].values()))
            norm = 1.5 * (1.0 - 0.75 + 0.75 * (length / mean))
            scores[chunk] = scores.get(chunk, 0.0) + weight * (tf / (tf + norm))
    ranked = sorted(scores.items(), key=lambda item: (-item[1], str(item[0])))
    return ranked[:k]


def found(results: Iterable[Any]) -> list[tuple[ChunkId, float]]:
    """`(chunk id, score)` of each search result, in order."""
    return [(result.chunk.id, result.score) for result in results]


def source_chunks(
    source: str, *texts: str, tenant_id: TenantId = TENANT, first: int = 1
) -> list[Chunk]:
    """The chunks of one source, laid end to end, with ids `first`, `first + 1`, ..."""
    chunks, start = [], 0
    for ordinal, text in enumerate(texts):
        chunks.append(
            make_chunk(
                text,
                id=chunk_id(first + ordinal),
                tenant_id=tenant_id,
                source_id=SourceId(source),
                ordinal=ordinal,
                start=start,
            )
        )
        start += len(text) + 1
    return chunks


#: Three chunks whose scores for "apple" are worked out by hand in a test.
FRUIT = ("apple banana", "apple apple cherry", "banana cherry cherry durian")
words = st.sampled_from(["apple", "banana", "cherry", "durian", "elder", "Fig", "fig!", "élan"])
texts = st.lists(words, min_size=1, max_size=8).map(" ".join)


class ChunkStoreCompliance(LifetimeCompliance):
    """Every rule of `redstring.ports.ChunkStore`; subclass and provide `new_store`."""

    port = ChunkStore

    def new_store(self) -> ChunkStore:
        """An empty store, of the adapter under test."""
        raise NotImplementedError

    def new_adapter(self) -> ChunkStore:
        return self.new_store()

    # -- round trip, copies ----------------------------------------------------

    async def test_chunks_read_back_in_the_order_asked_each_once(self) -> None:
        store = self.new_store()
        chunks = source_chunks("doc-1", "one", "two", "three")
        await store.put_chunks(chunks)
        wanted = [chunk_id(3), chunk_id(99), chunk_id(1), chunk_id(3)]
        assert await store.get_chunks(wanted, TENANT) == [chunks[2], chunks[0]]
        assert await store.get_chunks([], TENANT) == []
        assert await store.count_chunks(TENANT) == 3

    async def test_a_sources_chunks_read_back_in_ordinal_order(self) -> None:
        store = self.new_store()
        chunks = source_chunks("doc-1", "one", "two", "three", first=7)
        await store.put_chunks([chunks[2], chunks[0], chunks[1]])
        assert await store.get_source_chunks(SourceId("doc-1"), TENANT) == chunks
        assert await store.get_source_chunks(SourceId("doc-2"), TENANT) == []

    async def test_metadata_and_offsets_round_trip(self) -> None:
        store = self.new_store()
        chunk = make_chunk(
            "Zoë met 北京.", id=chunk_id(1), start=41, ordinal=3, metadata={"page": 2, "t": ["a"]}
        )
        await store.put_chunks([chunk])
        [read] = await store.get_chunks([chunk_id(1)], TENANT)
        assert read == chunk
        assert (read.start, read.end, read.ordinal) == (41, 52, 3)

    async def test_mutating_what_was_written_or_read_changes_nothing_stored(self) -> None:
        store = self.new_store()
        metadata: dict[str, Any] = {"tags": ["a"]}
        chunk = make_chunk("apple pie", id=chunk_id(1), metadata=metadata)
        await store.put_chunks([chunk])
        chunk.metadata["tags"].append("written")
        [read] = await store.get_chunks([chunk_id(1)], TENANT)
        read.metadata["tags"].append("read")
        [hit] = await store.search("apple", TENANT)
        hit.chunk.metadata["tags"].append("searched")
        [from_source] = await store.get_source_chunks(SourceId("doc-1"), TENANT)
        from_source.metadata["tags"].append("listed")
        [again] = await store.get_chunks([chunk_id(1)], TENANT)
        assert again.metadata == {"tags": ["a"]}

    # -- replace, delete, purge ---------------------------------------------------

    async def test_putting_a_source_again_replaces_all_its_chunks(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "old apple", "old banana", "old cherry"))
        await store.put_chunks(source_chunks("doc-2", "other apple", first=10))
        fresh = source_chunks("doc-1", "new apple", first=20)
        await store.put_chunks(fresh)
        assert await store.get_source_chunks(SourceId("doc-1"), TENANT) == fresh
        assert await store.get_chunks([chunk_id(1), chunk_id(2)], TENANT) == []
        assert await store.count_chunks(TENANT) == 2
        assert await store.search("old", TENANT) == []
        remaining = [*fresh, *source_chunks("doc-2", "other apple", first=10)]
        assert found(await store.search("apple new", TENANT)) == reference_search(
            remaining, "apple new"
        )

    async def test_a_chunk_id_put_under_another_source_moves_there(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "apple", "banana"))
        moved = make_chunk("cherry", id=chunk_id(2), source_id=SourceId("doc-2"))
        await store.put_chunks([moved])
        assert [c.id for c in await store.get_source_chunks(SourceId("doc-1"), TENANT)] == [
            chunk_id(1)
        ]
        assert await store.get_source_chunks(SourceId("doc-2"), TENANT) == [moved]
        assert await store.count_chunks(TENANT) == 2
        assert await store.search("banana", TENANT) == []

    async def test_deleting_a_source_removes_its_chunks_mentions_and_statistics(self) -> None:
        store = self.new_store()
        doc1 = source_chunks("doc-1", "apple banana", "apple")
        doc2 = source_chunks("doc-2", "apple cherry", "banana cherry cherry", first=10)
        await store.put_chunks([*doc1, *doc2])
        entity = EntityId(uuid4())
        await store.put_mentions(
            [Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=entity, start=0, end=5)]
        )
        assert await store.delete_source(SourceId("doc-1"), TENANT) == 2
        assert await store.delete_source(SourceId("doc-1"), TENANT) == 0
        assert await store.get_source_chunks(SourceId("doc-1"), TENANT) == []
        assert await store.mentions_of(TENANT, entity_ids=[entity]) == []
        assert await store.mentions_in([chunk_id(1)], TENANT) == []
        assert await store.count_chunks(TENANT) == 2
        assert found(await store.search("apple banana", TENANT)) == reference_search(
            doc2, "apple banana"
        )

    async def test_deleting_a_tenant_leaves_the_other_and_counts_what_it_removed(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "apple", "banana"))
        await store.put_chunks(source_chunks("doc-1", "apple", tenant_id=OTHER_TENANT))
        assert await store.delete_by_tenant(TENANT) == 2
        assert await store.delete_by_tenant(TENANT) == 0
        assert await store.count_chunks(TENANT) == 0
        assert await store.search("apple", TENANT) == []
        assert len(await store.search("apple", OTHER_TENANT)) == 1
        await store.put_chunks(source_chunks("doc-1", "apple"))
        assert found(await store.search("apple", TENANT)) == reference_search(
            source_chunks("doc-1", "apple"), "apple"
        )

    async def test_an_unknown_tenant_holds_nothing(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "apple"))
        other = TenantId(uuid4())
        entity = EntityId(uuid4())
        assert await store.get_chunks([chunk_id(1)], other) == []
        assert await store.get_source_chunks(SourceId("doc-1"), other) == []
        assert await store.count_chunks(other) == 0
        assert await store.delete_source(SourceId("doc-1"), other) == 0
        assert await store.mentions_of(other, entity_ids=[entity]) == []
        assert await store.mentions_in([chunk_id(1)], other) == []
        assert await store.delete_mentions_of(other, entity_ids=[entity]) == 0
        assert await store.delete_by_tenant(other) == 0
        await store.put_mentions([])
        assert await store.count_chunks(TENANT) == 1

    async def test_a_tenant_emptied_by_deletes_searches_as_empty(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "apple", "apple pie"))
        await store.delete_source(SourceId("doc-1"), TENANT)
        assert found(await store.search("apple", TENANT)) == reference_search([], "apple")
        assert await store.search("apple", TENANT) == []

    # -- tenants ------------------------------------------------------------------

    async def test_two_tenants_with_the_same_ids_and_texts_never_cross(self) -> None:
        store = self.new_store()
        mine = source_chunks("doc-1", *FRUIT)
        theirs = source_chunks("doc-1", *FRUIT, tenant_id=OTHER_TENANT)
        extra = make_chunk("apple", id=chunk_id(9), tenant_id=OTHER_TENANT, source_id="doc-2")
        await store.put_chunks([*mine, *theirs, extra])
        assert found(await store.search("apple", TENANT)) == reference_search(mine, "apple")
        assert found(await store.search("apple", OTHER_TENANT)) == reference_search(
            [*theirs, extra], "apple"
        )
        assert await store.count_chunks(TENANT) == 3
        [read] = await store.get_chunks([chunk_id(1)], OTHER_TENANT)
        assert read.tenant_id == OTHER_TENANT
        assert await store.delete_source(SourceId("doc-1"), TENANT) == 3
        assert await store.count_chunks(OTHER_TENANT) == 4
        assert await store.get_chunks([chunk_id(9)], TENANT) == []

    async def test_a_mention_in_one_tenant_is_not_seen_from_the_other(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "apple"))
        await store.put_chunks(source_chunks("doc-1", "apple", tenant_id=OTHER_TENANT))
        entity = EntityId(uuid4())
        mention = Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=entity)
        await store.put_mentions([mention])
        assert await store.mentions_of(OTHER_TENANT, entity_ids=[entity]) == []
        assert await store.mentions_in([chunk_id(1)], OTHER_TENANT) == []
        assert await store.delete_mentions_of(OTHER_TENANT, entity_ids=[entity]) == 0
        assert await store.mentions_of(TENANT, entity_ids=[entity]) == [mention]

    async def test_a_mention_of_a_chunk_only_the_other_tenant_holds_is_refused(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "apple", tenant_id=OTHER_TENANT))
        mention = Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=EntityId(uuid4()))
        with pytest.raises(MissingChunkError) as caught:
            await store.put_mentions([mention])
        assert (caught.value.chunk_id, caught.value.tenant_id) == (chunk_id(1), TENANT)

    # -- BM25 ---------------------------------------------------------------------

    async def test_scores_are_lucene_bm25_worked_out_by_hand(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", *FRUIT))
        results = found(await store.search("Apple", TENANT))
        # N = 3, avgdl = 3, df = 2: idf = ln(1 + 1.5 / 2.5) = ln 1.6.
        assert results == [(chunk_id(2), 0.26857350242613465), (chunk_id(1), 0.22117817846858148)]

    async def test_a_query_term_counts_once_and_terms_are_folded(self) -> None:
        store = self.new_store()
        chunks = source_chunks("doc-1", *FRUIT, "Élan, ÉLAN; fig")
        await store.put_chunks(chunks)
        once = found(await store.search("apple élan", TENANT))
        assert found(await store.search("APPLE apple ELAN!", TENANT)) == once
        assert once == reference_search(chunks, "apple elan")

    async def test_ties_break_by_chunk_id_string(self) -> None:
        store = self.new_store()
        ids = [ChunkId(UUID("f0000000-0000-4000-8000-000000000000")), chunk_id(0xA), chunk_id(2)]
        chunks = [make_chunk("apple", id=ids[n], source_id=SourceId(f"doc-{n}")) for n in range(3)]
        await store.put_chunks(chunks)
        results = found(await store.search("apple", TENANT, k=2))
        assert [chunk for chunk, _ in results] == [chunk_id(2), chunk_id(0xA)]
        assert results[0][1] == results[1][1]

    async def test_k_bounds_the_results_and_zero_gives_none(self) -> None:
        store = self.new_store()
        chunks = source_chunks("doc-1", *FRUIT)
        await store.put_chunks(chunks)
        assert found(await store.search("banana cherry apple", TENANT, k=2)) == (
            reference_search(chunks, "banana cherry apple", k=2)
        )
        assert await store.search("apple", TENANT, k=0) == []
        assert len(await store.search("banana cherry apple", TENANT, k=3)) == 3

    async def test_a_chunk_sharing_no_term_is_never_returned(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", *FRUIT))
        assert [c for c, _ in found(await store.search("durian", TENANT, k=3))] == [chunk_id(3)]
        assert await store.search("zebra", TENANT) == []
        assert await store.search("?!", TENANT) == []
        assert await store.search("apple", TenantId(uuid4())) == []

    async def test_a_chunk_without_terms_counts_in_the_statistics_but_never_matches(self) -> None:
        store = self.new_store()
        chunks = source_chunks("doc-1", "apple pie", "... !!! ...", "pie")
        await store.put_chunks(chunks)
        assert found(await store.search("pie apple", TENANT)) == reference_search(
            chunks, "pie apple"
        )
        assert await store.count_chunks(TENANT) == 3

    async def test_source_ids_filter_before_k(self) -> None:
        store = self.new_store()
        best = make_chunk("apple apple", id=chunk_id(1), source_id=SourceId("doc-1"))
        worse = make_chunk("apple banana cherry", id=chunk_id(2), source_id=SourceId("doc-2"))
        await store.put_chunks([best, worse])
        [result] = await store.search("apple", TENANT, k=1, source_ids=[SourceId("doc-2")])
        assert result.chunk.id == chunk_id(2)
        assert result.score == reference_search([best, worse], "apple")[1][1]
        assert await store.search("apple", TENANT, source_ids=[]) == []
        assert await store.search("apple", TENANT, source_ids=[SourceId("doc-9")]) == []

    @PROPERTY_SETTINGS
    @given(
        documents=st.lists(st.lists(texts, min_size=1, max_size=3), min_size=2, max_size=6),
        deleted=st.sets(st.integers(min_value=0, max_value=5), max_size=3),
        query=texts,
        k=st.integers(min_value=1, max_value=12),
    )
    @example(documents=[["apple"], ["apple"]], deleted=set(), query="apple", k=1)
    @example(documents=[["apple fig"], ["fig!"]], deleted={0}, query="fig élan", k=1)
    def test_search_equals_the_reference_after_any_puts_and_deletes(
        self, documents: list[list[str]], deleted: set[int], query: str, k: int
    ) -> None:
        async def scenario() -> None:
            store = self.new_store()
            held: dict[int, list[Chunk]] = {}
            for number, chunk_texts in enumerate(documents):
                chunks = source_chunks(f"doc-{number % 4}", *chunk_texts, first=100 * number)
                await store.put_chunks(chunks)
                # A source put again replaces what it held.
                held = {n: c for n, c in held.items() if n % 4 != number % 4}
                held[number] = chunks
            for number in deleted:
                await store.delete_source(SourceId(f"doc-{number % 4}"), TENANT)
                held = {n: c for n, c in held.items() if n % 4 != number % 4}
            remaining = [chunk for chunks in held.values() for chunk in chunks]
            assert found(await store.search(query, TENANT, k=k)) == reference_search(
                remaining, query, k=k
            )
            assert await store.count_chunks(TENANT) == len(remaining)

        run(scenario())

    async def test_many_writes_touching_one_term_rank_as_one_write_would(self) -> None:
        store = self.new_store()
        held: list[Chunk] = []
        for n in range(20):
            chunks = source_chunks(f"doc-{n}", f"apple {n}", first=10 * n)
            await store.put_chunks(chunks)
            held += chunks
            if n % 3 == 0:
                await store.delete_source(SourceId(f"doc-{n}"), TENANT)
                held = [chunk for chunk in held if chunk.source_id != f"doc-{n}"]
        assert found(await store.search("apple 4", TENANT, k=20)) == reference_search(
            held, "apple 4", k=20
        )

    async def test_removals_of_old_entries_outlive_merges_of_newer_writes_in_both_tenants(
        self,
    ) -> None:
        """One large write, then many small ones that each take one of its chunks away.

        The small writes' segments are merged among themselves long before
        the large one is: the removals they carry must still cancel its
        entries. The other tenant holds the same ids and texts, and is only
        added to, so a removal crossing tenants would show.
        """
        store = self.new_store()
        held: dict[TenantId, list[Chunk]] = {}
        for tenant in (TENANT, OTHER_TENANT):
            large = [
                chunk
                for n in range(40)
                # Longer as `n` grows, so the chunks taken away first score best.
                for chunk in source_chunks(
                    f"large-{n}", "apple pear" + " filler" * n, tenant_id=tenant, first=n + 1
                )
            ]
            await store.put_chunks(large)
            held[tenant] = large
        for n in range(30):
            small = source_chunks(f"small-{n}", f"apple {n}", first=100 + n)
            await store.put_chunks(small)
            await store.delete_source(SourceId(f"large-{n}"), TENANT)
            held[TENANT] = [c for c in held[TENANT] if c.source_id != f"large-{n}"] + small
        for tenant in (TENANT, OTHER_TENANT):
            for query, k in itertools.product(("apple", "pear", "apple 7 filler"), (3, 50)):
                assert found(await store.search(query, tenant, k=k)) == reference_search(
                    held[tenant], query, k=k
                )
            assert await store.count_chunks(tenant) == len(held[tenant])

    # -- refused input ----------------------------------------------------------------

    async def test_a_bad_chunk_after_a_good_one_writes_nothing(self) -> None:
        store = self.new_store()
        good = make_chunk("apple", id=chunk_id(1))
        bad = make_chunk("banana", id=chunk_id(2), source_id="doc-2").model_copy(
            update={"text": "   "}
        )
        with pytest.raises(ValueError, match=r"chunks\[1\]"):
            await store.put_chunks([good, bad])
        assert await store.count_chunks(TENANT) == 0
        assert await store.search("apple", TENANT) == []

    @pytest.mark.parametrize(
        ("update", "message"),
        [
            ({"end": 99}, "start..end"),
            ({"start": 3, "end": 3}, "start..end"),
            ({"text": "a\x00b", "end": 3}, "NUL"),
            ({"ordinal": -1}, "ordinal"),
            ({"ordinal": True}, "ordinal"),
            ({"source_id": " "}, "source_id"),
            ({"metadata": {"x": float("nan")}}, "metadata"),
            ({"tenant_id": "00000000-0000-4000-8000-000000000001"}, "tenant_id"),
            ({"id": 7}, "id"),
        ],
    )
    async def test_a_chunk_that_no_store_could_hold_is_refused(
        self, update: dict[str, Any], message: str
    ) -> None:
        store = self.new_store()
        bad = make_chunk("apple", id=chunk_id(1)).model_copy(update=update)
        with pytest.raises(ValueError, match=message):
            await store.put_chunks([bad])
        assert await store.count_chunks(TENANT) == 0

    async def test_a_batch_naming_one_chunk_or_one_ordinal_twice_is_refused(self) -> None:
        store = self.new_store()
        first = make_chunk("apple", id=chunk_id(1))
        with pytest.raises(ValueError, match="twice"):
            await store.put_chunks([first, make_chunk("pear", id=chunk_id(1), ordinal=1)])
        with pytest.raises(ValueError, match="twice"):
            await store.put_chunks([first, make_chunk("pear", id=chunk_id(2))])
        with pytest.raises(ValueError, match="not a Chunk"):
            await store.put_chunks([first, "apple"])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="sequence"):
            await store.put_chunks(first)  # type: ignore[arg-type]
        assert await store.count_chunks(TENANT) == 0
        await store.put_chunks([])
        assert await store.count_chunks(TENANT) == 0

    @pytest.mark.parametrize(
        ("call", "message"),
        [
            ({"query": "  "}, "query"),
            ({"query": 7}, "query"),
            ({"k": -1}, "k"),
            ({"k": 1.5}, "k"),
            ({"tenant_id": str(TENANT)}, "tenant_id"),
            ({"source_ids": "doc-1"}, "source_ids"),
            ({"source_ids": [1]}, r"source_ids\[0\]"),
        ],
    )
    async def test_bad_search_arguments_are_refused(
        self, call: dict[str, Any], message: str
    ) -> None:
        store = self.new_store()
        arguments: dict[str, Any] = {"query": "apple", "tenant_id": TENANT, **call}
        with pytest.raises(ValueError, match=message):
            await store.search(**arguments)

    async def test_bad_read_arguments_are_refused(self) -> None:
        store = self.new_store()
        with pytest.raises(ValueError, match=r"chunk_ids\[1\]"):
            await store.get_chunks([chunk_id(1), "x"], TENANT)  # type: ignore[list-item]
        with pytest.raises(ValueError, match="source_id"):
            await store.get_source_chunks(7, TENANT)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="tenant_id"):
            await store.count_chunks("tenant")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="entity_ids"):
            await store.mentions_of(TENANT, entity_ids="abc")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="tenant_id"):
            await store.delete_source(SourceId("doc-1"), None)  # type: ignore[arg-type]

    # -- mentions -------------------------------------------------------------------

    async def test_mentions_read_back_by_target_and_by_chunk_in_order(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "Ada met Babbage", "Ada wrote"))
        ada, babbage = EntityId(UUID(int=1)), EntityId(UUID(int=2))
        met = RelationshipId(UUID(int=3))
        mentions = [
            Mention(tenant_id=TENANT, chunk_id=chunk_id(2), entity_id=ada, start=0, end=3),
            Mention(tenant_id=TENANT, chunk_id=chunk_id(1), relationship_id=met),
            Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=babbage, start=8, end=15),
            Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=ada, start=0, end=3),
        ]
        await store.put_mentions(mentions)
        await store.put_mentions(mentions[:1])
        by_chunk1 = [mentions[3], mentions[2], mentions[1]]
        assert await store.mentions_in([chunk_id(1)], TENANT) == by_chunk1
        assert await store.mentions_of(TENANT, entity_ids=[ada]) == [mentions[3], mentions[0]]
        assert await store.mentions_of(TENANT, relationship_ids=[met]) == [mentions[1]]
        # A relationship id equal to an entity id is another target.
        assert await store.mentions_of(TENANT, relationship_ids=[RelationshipId(babbage)]) == []
        assert await store.mentions_of(TENANT) == []
        assert await store.mentions_in([], TENANT) == []
        assert await store.delete_mentions_of(TENANT, entity_ids=[ada]) == 2
        assert await store.mentions_in([chunk_id(2)], TENANT) == []
        assert await store.delete_mentions_of(TENANT) == 0

    async def test_a_bad_mention_after_a_good_one_writes_nothing(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "Ada"))
        entity = EntityId(uuid4())
        good = Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=entity, start=0, end=3)
        past = Mention(tenant_id=TENANT, chunk_id=chunk_id(1), entity_id=entity, start=1, end=4)
        missing = Mention(tenant_id=TENANT, chunk_id=chunk_id(5), entity_id=entity)
        with pytest.raises(ValueError, match="past"):
            await store.put_mentions([good, past])
        with pytest.raises(MissingChunkError):
            await store.put_mentions([good, missing])
        with pytest.raises(ValueError, match="not a Mention"):
            await store.put_mentions([good, "mention"])  # type: ignore[list-item]
        assert await store.mentions_of(TENANT, entity_ids=[entity]) == []

    async def test_a_replaced_chunk_loses_its_mentions(self) -> None:
        store = self.new_store()
        await store.put_chunks(source_chunks("doc-1", "Ada", "Bob"))
        entity = EntityId(uuid4())
        await store.put_mentions(
            [Mention(tenant_id=TENANT, chunk_id=chunk_id(n), entity_id=entity) for n in (1, 2)]
        )
        await store.put_chunks(source_chunks("doc-1", "Ada again"))
        assert await store.mentions_of(TENANT, entity_ids=[entity]) == []
        await store.delete_by_tenant(TENANT)
        await store.put_chunks(source_chunks("doc-1", "Ada"))
        assert await store.mentions_in([chunk_id(1)], TENANT) == []
