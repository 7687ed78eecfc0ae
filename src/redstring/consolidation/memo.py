"""What one consolidation pass keeps across its rounds: name evidence, keys, rankings.

See ADR 0087 and ADR 0100.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from redstring.consolidation.features import Population, PopulationTally, _name_evidence

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from collections.abc import Set as AbstractSet

    from redstring.consolidation.features import Profile, PropertyKind, _NameEvidence

#: A pair as the memo keys it: the two profiles' ids, and whether their type's names are whole.
PairKey = tuple[int, int, bool]


#: The pairs of profiles that left are let go once those are one in this many of a round's.
_LET_GO: Final = 16


class PassMemo:
    """What one pass measured of its profiles and pairs, kept across its rounds.

    Name evidence (the best over every name and alias of each side) is most
    of what `compare` costs and depends on nothing but the two profiles and
    whether their type's names are whole; a profile's blocking keys depend
    on it alone, and the candidates it ranks on nothing but the blocks of
    those keys. A pass that meets a pair or a profile again in a later
    round reads them here. Keyed by the profile objects (a profile rebuilt
    after a merge is a new key); the memo holds every profile it keys on,
    so no key outlives its profile, and `advance` lets go of the profiles a
    round no longer holds (merged away) with everything keyed on them. A
    pair settled apart keeps only that: its evidence is read again only
    if a changed judgement unsettles it, and then measured again, to the
    same values. See ADR 0087, ADR 0100 and ADR 0118.
    """

    __slots__ = (
        "_counted",
        "_gone",
        "_held",
        "_judged",
        "_keys",
        "_profiles",
        "_ranked",
        "_round",
        "_settled",
        "_tally",
    )

    def __init__(self) -> None:
        self._held: dict[PairKey, _NameEvidence] = {}
        self._keys: dict[int, set[str]] = {}
        self._profiles: dict[int, Profile] = {}
        self._gone: dict[int, Profile] = {}
        self._ranked: dict[int, tuple[tuple[int, int, int], tuple[Profile, ...]]] = {}
        self._round: tuple[Profile, ...] = ()
        self._settled: set[PairKey] = set()
        self._judged: object = None
        self._tally = PopulationTally()
        self._counted: dict[int, Profile] = {}

    def population(
        self, profiles: Sequence[Profile], *, kinds: Mapping[str, PropertyKind] | None = None
    ) -> Population:
        """`Population.of(profiles, kinds=kinds)`, counting only who arrived or left since."""
        now = {id(profile): profile for profile in profiles}
        if len(now) != len(profiles):  # a profile twice: counted twice, as `of` does
            return Population.of(profiles, kinds=kinds)
        counted = self._counted
        for key in [key for key in counted if key not in now]:
            self._tally.remove(counted.pop(key))
        for key, profile in now.items():
            if key not in counted:
                self._tally.add(profile)
                counted[key] = profile
        return self._tally.population(kinds=kinds)

    def __len__(self) -> int:
        return len(self._held)

    def _hold(self, profile: Profile) -> None:
        self._profiles.setdefault(id(profile), profile)

    def evidence(self, left: Profile, right: Profile, single: bool) -> _NameEvidence:
        """The name evidence of the pair, measured once (again only once it was settled)."""
        key = (id(left), id(right), single)
        found = self._held.get(key)
        if found is None:
            self._hold(left)
            self._hold(right)
            found = self._held[key] = _name_evidence(left, right, single)
        return found

    def fold_in(
        self,
        measured: Iterable[tuple[Profile, Profile, _NameEvidence]],
        settled: Iterable[tuple[Profile, Profile]],
        population: Population,
    ) -> None:
        """Keep what another process measured of pairs: name evidence, and pairs settled apart.

        The same as if `evidence` had measured each of `measured` here, then
        `settle` had settled each of `settled` (ADR 0117).
        """
        held, apart, single = self._held, self._settled, population.single_token_names
        hold = self._profiles.setdefault
        for left, right, evidence in measured:
            key = (id(left), id(right), single(left.entity_type))
            if key not in held:
                hold(key[0], left)
                hold(key[1], right)
                held[key] = evidence
        for left, right in settled:  # as `settle` does, without its call per pair
            key = (id(left), id(right), single(left.entity_type))
            hold(key[0], left)
            hold(key[1], right)
            held.pop(key, None)
            apart.add(key)

    def judge(self, how: object) -> None:
        """Settle pairs under `how` (the policy, and what the pass decided of kinds and names).

        Pairs settled under another `how` are unsettled: a changed weight or
        kind could move them.
        """
        if how != self._judged:
            self._settled.clear()
            self._judged = how

    def settled(self, left: Profile, right: Profile, population: Population) -> bool:
        """Whether the pair was settled apart, these two profiles as they are now."""
        single = population.single_token_names(left.entity_type)
        return (id(left), id(right), single) in self._settled

    def settle(self, left: Profile, right: Profile, population: Population) -> None:
        """Remember that the pair was assessed far enough below the merge band to stay apart.

        Its name evidence is let go: nothing reads it while the pair stays settled.
        """
        self._hold(left)
        self._hold(right)
        self.settle_key((id(left), id(right), population.single_token_names(left.entity_type)))

    def settled_keys(self) -> AbstractSet[PairKey]:
        """The keys of the pairs settled apart, for a round to read, not change.

        A pair's key is `(id(left), id(right), whole)`, `whole` whether its
        type's names are whole (`Population.single_token_names`).
        """
        return self._settled

    def settle_key(self, key: PairKey) -> None:
        """`settle` by the pair's key, for two profiles of the round `advance` started."""
        self._held.pop(key, None)
        self._settled.add(key)

    def names(
        self, profiles: Sequence[Profile], pairs: Iterable[tuple[int, int]], population: Population
    ) -> dict[tuple[int, int], float]:
        """`name` for each pair of positions in `profiles`, in the order of `pairs`."""
        single = {t: population.single_token_names(t) for t in {p.entity_type for p in profiles}}
        held, evidence = self._held, self.evidence
        found: dict[tuple[int, int], float] = {}
        for i, j in pairs:
            left, right = profiles[i], profiles[j]
            whole = single[left.entity_type]
            known = held.get((id(left), id(right), whole))
            found[i, j] = (known or evidence(left, right, whole))[0]
        return found

    def keys(self, profile: Profile, measure: Callable[[Profile], set[str]]) -> set[str]:
        """The blocking keys of `profile`, measured once by `measure`."""
        found = self._keys.get(id(profile))
        if found is None:
            self._hold(profile)
            found = self._keys[id(profile)] = measure(profile)
        return found

    def ranked(
        self, profile: Profile, settings: tuple[int, int, int]
    ) -> tuple[Profile, ...] | None:
        """The candidates `profile` ranked with these settings, unless `advance` forgot them."""
        found = self._ranked.get(id(profile))
        return found[1] if found is not None and found[0] == settings else None

    def keep_ranked(
        self, profile: Profile, settings: tuple[int, int, int], found: tuple[Profile, ...]
    ) -> None:
        """Remember the candidates `profile` ranked with these settings."""
        self._hold(profile)
        self._ranked[id(profile)] = (settings, found)

    def _let_go(self) -> None:
        """Drop every pair keyed on a profile that left, in one scan of each (ADR 0118)."""
        gone = self._gone
        self._held = {
            key: found
            for key, found in self._held.items()
            if key[0] not in gone and key[1] not in gone
        }
        self._settled = {key for key in self._settled if key[0] not in gone and key[1] not in gone}
        gone.clear()

    def advance(self, profiles: Sequence[Profile]) -> None:
        """Start a round of `profiles`: forget what their change since the last round moved.

        A key of a profile that left or arrived since the last round has a
        block of other members now, so a profile holding such a key ranks
        its candidates afresh; one none of whose keys moved ranks exactly the
        candidates it ranked then, and `ranked` gives them. When the profiles both rounds
        hold are in another order (ties rank by position), every ranking is
        dropped. The pairs keyed on profiles that left (merged away) are let
        go once those profiles are one in `_LET_GO` of the round's, in one scan;
        until then the memo holds the profiles, so no key outlives its own.
        Call it once a round, after the round's keys are measured.
        """
        before = {id(profile): n for n, profile in enumerate(self._round)}
        moved: set[str] = set()
        last = -1
        for profile in profiles:
            at = before.pop(id(profile), None)
            if at is None:
                moved |= self._keys.get(id(profile), set())
            elif at < last:
                self._ranked.clear()
            else:
                last = at
        for gone in before:
            moved |= self._keys.get(gone, set())
        for profile in profiles:
            if id(profile) in self._ranked and not moved.isdisjoint(self._keys[id(profile)]):
                del self._ranked[id(profile)]
        kept = {id(profile) for profile in profiles}
        for key in kept & self._gone.keys():  # back after leaving: held below, as the round's
            del self._gone[key]
        for gone in [key for key in self._profiles if key not in kept]:
            self._gone[gone] = self._profiles.pop(gone)
            self._keys.pop(gone, None)
            self._ranked.pop(gone, None)
        if len(self._gone) * _LET_GO >= max(len(profiles), 1):
            self._let_go()
        self._profiles.update((id(profile), profile) for profile in profiles)
        self._round = tuple(profiles)
