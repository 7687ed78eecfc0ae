"""Run the test suite with branch coverage and hold the line on `.coverage-baseline`.

Fails when pytest fails, when it passed no test at all (pytest's own exit
status is 0 for some empty runs and 5 for others; the count is what is read),
or when coverage falls more than `TOLERANCE` points below the baseline. When
coverage rises, the baseline is raised to match, so the ratchet only turns one
way; commit the new `.coverage-baseline` with the change that earned it.

Usage: `uv run python scripts/coverage_ratchet.py [pytest arguments...]`
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / ".coverage-baseline"
#: Points of coverage a change may lose before the ratchet fails.
TOLERANCE = 0.1
_SUMMARY = re.compile(r"(\d+) passed")


def run_tests(arguments: list[str]) -> tuple[int, int]:
    """Run pytest under coverage; return (pytest exit status, passed count)."""
    command = [
        sys.executable,
        "-m",
        "coverage",
        "run",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        *arguments,
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    tail: list[str] = []
    for line in process.stdout:
        sys.stdout.write(line)
        tail = [*tail[-20:], line]
    status = process.wait()
    passed = 0
    for line in reversed(tail):
        match = _SUMMARY.search(line)
        if match:
            passed = int(match.group(1))
            break
    return status, passed


def measured_coverage() -> float:
    """Total branch coverage of the run just made, in percent."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "coverage.json"
        subprocess.run(
            [sys.executable, "-m", "coverage", "json", "-q", "-o", str(report)],
            cwd=ROOT,
            check=True,
        )
        totals = json.loads(report.read_text())["totals"]
    subprocess.run([sys.executable, "-m", "coverage", "report"], cwd=ROOT, check=True)
    return float(totals["percent_covered"])


def main(arguments: list[str]) -> int:
    status, passed = run_tests(arguments)
    if status != 0:
        print(f"coverage ratchet: pytest failed with exit status {status}", file=sys.stderr)
        return status
    if passed == 0:
        print("coverage ratchet: no test passed; an empty run is a failure", file=sys.stderr)
        return 1
    coverage = measured_coverage()
    baseline = float(BASELINE.read_text()) if BASELINE.exists() else 0.0
    print(f"coverage ratchet: {passed} passed, coverage {coverage:.2f}% (baseline {baseline:.2f}%)")
    if coverage < baseline - TOLERANCE:
        print(
            f"coverage ratchet: coverage fell {baseline - coverage:.2f} points below the baseline",
            file=sys.stderr,
        )
        return 1
    if coverage > baseline:
        BASELINE.write_text(f"{coverage:.2f}\n")
        print(f"coverage ratchet: baseline raised to {coverage:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
