"""How each command's data reads on standard output: lines and tables, apart from the work.

Each function takes what an action in `actions` returned and prints it
(through click, so `run` can redirect it), or returns the line to print.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from redstring.cli.output import print_json, print_table

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.cli.actions import Match, Neighbor, Stats
    from redstring.composition import ConsolidationReport, GraphBuildReport, ImportReport
    from redstring.domain.entity import Entity
    from redstring.domain.source import SourceDocument
    from redstring.ports.embedding import EmbeddingProvider


def count(number: int, one: str, many: str) -> str:
    """`number` with thousands separators and the noun that agrees with it."""
    return f"{number:,} {one if number == 1 else many}"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def import_summary(
    result: ImportReport, *, file: str, location: str, embeddings: EmbeddingProvider | None
) -> str:
    """The one line `import` prints."""
    parts = [f"imported {count(result.entities, 'entity', 'entities')} from {file} into {location}"]
    if result.relationships:
        parts.append(count(result.relationships, "relationship", "relationships"))
    if embeddings is not None:
        parts.append(f"{result.embedded:,} embedded with {embeddings.model}")
        if result.already_embedded:
            parts.append(f"{result.already_embedded:,} already embedded")
    if result.duplicates:
        parts.append(f"{count(result.duplicates, 'duplicate row', 'duplicate rows')} merged")
    return ", ".join(parts)


def build_lines(
    documents: Sequence[SourceDocument], reports: Sequence[GraphBuildReport]
) -> list[str]:
    """One line per document `build` read."""
    return [
        f"{document.id}: {count(report.entities, 'entity', 'entities')}, "
        f"{count(report.relationships, 'relationship', 'relationships')}, "
        f"{count(report.failed_chunks, 'failed chunk', 'failed chunks')}"
        for document, report in zip(documents, reports, strict=True)
    ]


def search_results(matches: Sequence[Match], *, query: str, tenant: str, as_json: bool) -> None:
    """Print `search`'s matches as a table, or as JSON."""
    if as_json:
        print_json({"query": query, "tenant": tenant, "matches": list(matches)})
        return
    if not matches:
        click.echo("no matches")
        return
    print_table(
        ["#", "name", "type", "fused", "semantic", "lexical", "id", "properties"],
        [
            [
                str(match["rank"]),
                match["name"],
                match["entity_type"],
                f"{match['score']:.4f}",
                _score(match["semantic"]),
                _score(match["lexical"]),
                match["id"],
                json.dumps(match["properties"], ensure_ascii=False) if match["properties"] else "",
            ]
            for match in matches
        ],
        numeric={"#", "fused", "semantic", "lexical"},
        widest={"name": 40, "type": 16, "properties": 48},
        optional=["id", "properties"],
    )


def stats_summary(stats: Stats, *, as_json: bool) -> None:
    """Print `stats`'s totals and one row per tenant, or JSON."""
    if as_json:
        print_json(stats)
        return
    models = ", ".join(stats["models"]) or "none (no vectors)"
    click.echo(
        f"{stats['entities']:,} entities, {stats['relationships']:,} relationships, "
        f"{stats['vectors']:,} vectors in {count(len(stats['tenants']), 'tenant', 'tenants')}; "
        f"model: {models}"
    )
    if stats["tenants"]:
        print_table(
            ["tenant", "entities", "relationships", "vectors"],
            [
                [
                    row["tenant"],
                    f"{row['entities']:,}",
                    f"{row['relationships']:,}",
                    f"{row['vectors']:,}",
                ]
                for row in stats["tenants"]
            ],
            numeric={"entities", "relationships", "vectors"},
        )


def neighbor_list(
    start: Entity,
    rows: Sequence[Neighbor],
    *,
    depth: int,
    as_json: bool,
) -> None:
    """Print `neighbors`' entities as a table, or JSON."""
    if as_json:
        print_json({"entity": str(start.id), "depth": depth, "neighbors": rows})
        return
    if not rows:
        click.echo("no neighbors")
        return
    print_table(
        ["name", "type", "id"], [[row["name"], row["entity_type"], row["id"]] for row in rows]
    )


def consolidation(report: ConsolidationReport, *, as_json: bool) -> None:
    """Print what `consolidate` merged (or would merge), or JSON."""
    merges: list[dict[str, Any]] = [
        {
            "event_id": None if merge.event_id is None else str(merge.event_id),
            "canonical_id": str(merge.canonical_id),
            "merged_ids": [str(each) for each in merge.merged_ids],
            "score": merge.score,
            "reason": merge.reason,
            "canonical_name": merge.canonical_name,
            "merged_names": list(merge.merged_names),
            "band": None if merge.band is None else merge.band.value,
        }
        for merge in report.merges
    ]
    if as_json:
        print_json({"dry_run": report.dry_run, "entities": report.entities, "merges": merges})
        return
    verb = "would merge" if report.dry_run else "merged"
    click.echo(f"{verb} {len(merges)} groups of {report.entities} entities")
    for merge in merges:
        event = merge["event_id"] or "-"
        names = ", ".join(merge["merged_names"])
        score = "" if merge["score"] is None else f" {merge['score']:.3f}"
        click.echo(f"{event}  {merge['canonical_name']} <- {names}  [{merge['band']}{score}]")
        click.echo(f"    {merge['reason']}")
