"""The main job, end to end: import 4,000 real cities, then search them.

Imports `data/cities.jsonl` (GeoNames, CC BY 4.0) into one SQLite file,
embedding every name with the local multilingual-e5-small model, then runs
searches that show what each channel is for: the lexical channel catches a
misspelling, the semantic channel a paraphrase or an older name. Then it
adds a handful of short notes about some of the cities (`data/city-notes.jsonl`)
and asks questions of them: each passage comes back with its source, its
offsets and the cities it names, linked by name and alias ("Edo" is
Tokyo). It uses the `redstring` command line, so every step can be typed
by hand as well.
"""

import sys
from pathlib import Path

from redstring.cli import main as redstring

DATA = Path(__file__).resolve().parent / "data" / "cities.jsonl"
NOTES = Path(__file__).resolve().parent / "data" / "city-notes.jsonl"
DATABASE = Path("redstring-demo.db")

#: (what it shows, the query, extra search arguments)
SEARCHES = [
    ("a misspelling: the lexical channel scores the name", "Philadelfia", []),
    ("another misspelling", "Johanesburg", []),
    ("a paraphrase: only the semantic channel can see it", "capital of Japan", []),
    ("an older name: the semantic channel knows Beijing", "Peking", ["--mode", "semantic"]),
    ("the same query, lexical only: Beijing's alias Pekin", "Peking", ["--mode", "lexical"]),
]
#: (what it shows, the question) asked of the notes
QUESTIONS = [
    ("a passage that names Tokyo by its old name, Edo", "What was Tokyo called before 1868?"),
    ("a passage about a city of three names", "Which city was renamed Leningrad?"),
]


def run(data: Path = DATA, database: Path = DATABASE, notes: Path = NOTES) -> int:
    """Import `data` into `database`, search it, add `notes` and ask; return the exit status."""
    print(f"$ redstring import {data.name} --db {database}")
    status = redstring(["import", str(data), "--db", str(database)])
    if status:
        return status
    for title, query, extra in SEARCHES:
        command = ["search", repr(query), "--db", str(database), "-k", "3", *extra]
        print(f"\n# {title}\n$ redstring {' '.join(command)}")
        status = redstring(["search", query, "--db", str(database), "-k", "3", *extra])
        if status:
            return status
    print(
        f"\n# documents: passages linked to the cities they name\n"
        f"$ redstring add {notes.name} --db {database}"
    )
    status = redstring(["add", str(notes), "--db", str(database)])
    if status:
        return status
    for title, question in QUESTIONS:
        print(f"\n# {title}\n$ redstring ask {question!r} --db {database} -k 1")
        status = redstring(["ask", question, "--db", str(database), "-k", "1"])
        if status:
            return status
    print(f"\nThe database stays in {database}: search it yourself with")
    print(f"  python3 -m uv run --all-extras redstring search 'your query' --db {database}")
    return 0


if __name__ == "__main__":
    sys.exit(run())
