"""The bench's fit of the evidence order, on small sets built by hand."""

from __future__ import annotations

from dataclasses import replace
from uuid import UUID

from bench.fusion_fit import FusionQuery, fit, judge, leave_one_set_out

from redstring.domain.fusion import evidence_order
from redstring.domain.ids import EntityId


def entity(n: int) -> EntityId:
    return EntityId(UUID(int=n))


def lexical_knows(count: int, offset: int) -> list[FusionQuery]:
    """Queries whose answer is the lexical channel's first, never the semantic one's."""
    queries = []
    for n in range(count):
        right, wrong = entity(offset + 2 * n), entity(offset + 2 * n + 1)
        queries.append(
            FusionQuery(
                semantic=((wrong, 0.95), (entity(10_000 + n), 0.9)),
                lexical=((right, 0.9 + n % 5 / 100), (entity(20_000 + n), 0.6)),
                gold=frozenset({right}),
            )
        )
    return queries


def test_a_fit_learns_which_channel_answers() -> None:
    """Every right answer is lexical-only: the fitted order puts it first everywhere."""
    sets = [lexical_knows(20, 0), lexical_knows(20, 1000)]
    weights = fit(sets)
    for queries in sets:
        assert judge(queries, weights, 10) == (1.0, 1.0)


def test_without_weights_judge_measures_plain_rrf() -> None:
    """RRF ties the two first answers and breaks by the component sum: semantic's .95 wins."""
    queries = lexical_knows(10, 0)
    assert judge(queries, None, 10) == (0.0, 1.0)
    ranked = evidence_order(queries[0].semantic, queries[0].lexical, 10, None)
    assert ranked[0][0] == queries[0].semantic[0][0]


def test_the_same_sets_give_the_same_weights() -> None:
    sets = [lexical_knows(15, 0), lexical_knows(15, 500)]
    assert fit(sets) == fit(sets)


def test_leave_one_set_out_judges_each_set_on_weights_fitted_without_it() -> None:
    by_set = {"first": lexical_knows(12, 0), "second": lexical_knows(12, 1000)}
    rows = leave_one_set_out(by_set, 10)
    assert [row.held_out for row in rows] == ["first", "second"]
    for row in rows:
        assert row.weights == fit([by_set[name] for name in by_set if name != row.held_out])
        assert row.rrf == (0.0, 1.0)
        assert row.loso == (1.0, 1.0)
        assert row.semantic == (0.0, 0.0)
        assert row.lexical == (1.0, 1.0)
        assert row.own == judge(by_set[row.held_out], fit([by_set[row.held_out]]), 10)


def test_a_query_without_a_right_candidate_does_not_move_the_fit() -> None:
    lost = FusionQuery(
        semantic=((entity(90_000), 0.99),),
        lexical=((entity(90_001), 0.99),),
        gold=frozenset({entity(90_002)}),
    )
    base = lexical_knows(15, 0)
    assert fit([[*base, lost]]) == fit([base])


def test_a_fit_never_gives_a_weight_the_sign_that_inverts_a_channel() -> None:
    """Every right answer is the semantic channel's last: a worse rank would count for it.

    Unconstrained, the fit would make the semantic rank's weight positive
    and invert the channel; held to its sign, that weight stays at or below 0.
    """
    queries = []
    for n in range(30):
        ranked = tuple((entity(100 * n + place), 0.95 - place / 100) for place in range(5))
        queries.append(
            FusionQuery(
                semantic=ranked,
                lexical=((entity(90_000 + n), 0.8),),
                gold=frozenset({ranked[-1][0]}),
            )
        )
    weights = fit([queries])
    assert weights.semantic_log_rank <= 0
    assert weights.semantic >= 0
    assert weights.semantic_gap <= 0


def test_a_fit_learns_from_a_semantic_only_candidates_measured_name() -> None:
    """The answer is the semantic channel's second; only its measured lexical score says so.

    The lexical channel returned neither semantic candidate, so without
    `unranked_lexical` nothing tells the two apart but the semantic order,
    which is wrong every time (ADR 0119).
    """
    queries = []
    for n in range(30):
        wrong, right = entity(100 * n), entity(100 * n + 1)
        queries.append(
            FusionQuery(
                semantic=((wrong, 0.95), (right, 0.94)),
                lexical=((entity(90_000 + n), 0.7),),
                gold=frozenset({right}),
                unranked_lexical={wrong: 0.3, right: 0.9},
            )
        )
    assert judge(queries, fit([queries]), 10)[0] == 1.0
    unmeasured = [replace(query, unranked_lexical={}) for query in queries]
    assert judge(unmeasured, fit([unmeasured]), 10)[0] == 0.0
