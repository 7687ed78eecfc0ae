"""What the command line costs to start, against a bare interpreter measured in the same run.

Times, in fresh interpreters, `python -c pass` (the floor), `import
redstring` (the library alone), `import click`, `import rich.console`, and
`redstring --version` and `redstring stats --help` through
`python -m redstring.cli`, and prints the median wall time of each and its
ratio to the floor. rich is imported only when a table or a terminal
progress bar is drawn, so `--version` and `--help` do not pay for it.

Usage: `uv run --all-extras python bench/cli_startup.py [--repeats R]`
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (floor)": ["-c", "pass"],
    "import redstring": ["-c", "import redstring"],
    "import click": ["-c", "import click"],
    "import rich.console, rich.table": ["-c", "import rich.console, rich.table"],
    "redstring --version": ["-m", "redstring.cli", "--version"],
    "redstring stats --help": ["-m", "redstring.cli", "stats", "--help"],
}


def _median_seconds(arguments: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, *arguments], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    # Interleave the cases so load on the machine falls on each alike.
    medians = {name: _median_seconds(arguments, 1) for name, arguments in CASES.items()}
    samples = {name: [medians[name]] for name in CASES}
    for _ in range(repeats - 1):
        for name, arguments in CASES.items():
            samples[name].append(_median_seconds(arguments, 1))
    floor = statistics.median(samples["python -c pass (floor)"])
    print(f"{'case':<34} {'median ms':>10} {'x floor':>8}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<34} {median * 1000:>10.1f} {median / floor:>8.2f}")


if __name__ == "__main__":
    main()
