"""`redstring.composition` is a package whose root re-exports what its modules define."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import pytest

import redstring.composition

SUBMODULES = sorted(
    info.name
    for info in pkgutil.iter_modules(
        redstring.composition.__path__, prefix="redstring.composition."
    )
)


def _defined_publicly(module_name: str) -> set[str]:
    """Public names a module binds at top level itself, as opposed to importing them."""
    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def test_the_package_has_its_modules() -> None:
    assert "redstring.composition.build_graph" in SUBMODULES


@pytest.mark.parametrize("module_name", SUBMODULES)
def test_every_public_name_a_module_defines_is_importable_from_the_package(
    module_name: str,
) -> None:
    """The move to a package must not break `from redstring.composition import X`."""
    defined = _defined_publicly(module_name)
    assert defined
    assert defined <= set(redstring.composition.__all__)
    for name in defined:
        assert getattr(redstring.composition, name) is getattr(
            importlib.import_module(module_name), name
        )


def test_the_names_importable_before_the_move_still_are() -> None:
    from redstring.composition import AUTO, AutoDomain, GraphBuildReport, build_graph

    assert AUTO is AutoDomain.AUTO
    assert callable(build_graph)
    assert GraphBuildReport.__name__ == "GraphBuildReport"


def test_all_is_sorted() -> None:
    assert list(redstring.composition.__all__) == sorted(redstring.composition.__all__)
