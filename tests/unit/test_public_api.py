"""The public surface: what `redstring` exports, and that it is self-contained."""

from __future__ import annotations

import collections.abc
import enum
import importlib
import inspect
import pkgutil
import sys
import types
import typing
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

import asyncpg
import httpx
import pydantic
import pytest

import redstring
from redstring.domain.exceptions import RedstringError

#: Third-party types an exported signature may name: `pydantic.BaseModel` is
#: the schema contract of `LlmProvider.extract`, and pydantic is a core
#: dependency every caller already has; `asyncpg.Pool` is the pool a caller
#: of the Postgres adapters may hand them, from the driver their extra installs;
#: `httpx.AsyncClient` is the client a caller may hand the HTTP providers, the
#: same way (the `http` extra).
ALLOWED_THIRD_PARTY: frozenset[object] = frozenset(
    {pydantic.BaseModel, asyncpg.Pool, httpx.AsyncClient}
)

#: Every StrEnum in the package, with its literal values: they are wire formats.
PINNED_ENUMS: dict[str, dict[str, str]] = {
    "redstring.domain.entity.ExtractionMethod": {
        "LLM": "llm",
        "PATTERN": "pattern",
        "MANUAL": "manual",
        "HYBRID": "hybrid",
    },
    "redstring.domain.retrieval.RetrievalMode": {
        "SEMANTIC": "semantic",
        "LEXICAL": "lexical",
        "HYBRID": "hybrid",
    },
    "redstring.consolidation.features.PropertyKind": {
        "IDENTIFIER": "identifier",
        "MEASURE": "measure",
        "CATEGORY": "category",
        "VALUE": "value",
    },
    "redstring.domain.blocking.BlockingKeyStrategy": {
        "PREFIX": "prefix",
        "ENTITY_TYPE": "entity_type",
        "SOUNDEX": "soundex",
    },
    "redstring.consolidation.features.Agreement": {
        "EQUAL": "equal",
        "NEAR": "near",
        "DIFFERENT": "different",
    },
    "redstring.consolidation.policy.MergeBand": {
        "MERGE": "merge",
        "ASK": "ask",
        "APART": "apart",
    },
}


def _all_modules() -> list[types.ModuleType]:
    names = [
        info.name
        for info in pkgutil.walk_packages(redstring.__path__, prefix="redstring.")
        # A `__main__` module runs its program when imported.
        if not info.name.endswith(".__main__")
    ]
    return [redstring, *(importlib.import_module(name) for name in names)]


def _all_classes() -> list[type]:
    found: dict[str, type] = {}
    for module in _all_modules():
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def _exported() -> dict[str, object]:
    return {name: getattr(redstring, name) for name in redstring.__all__}


def _namespace() -> dict[str, Any]:
    """Names an annotation may use: the exports, typing, and collections.abc."""
    return {**vars(typing), **vars(collections.abc), **_exported()}


def _named_types(annotation: object) -> typing.Iterator[object]:
    if annotation is None or annotation is type(None) or annotation is Ellipsis:
        return
    if isinstance(annotation, list):  # a Callable's parameter list
        for argument in annotation:
            yield from _named_types(argument)
        return
    if isinstance(annotation, TypeVar):
        if annotation.__bound__ is not None:
            yield from _named_types(annotation.__bound__)
        for constraint in annotation.__constraints__:
            yield from _named_types(constraint)
        return
    origin = get_origin(annotation)
    if origin is None:
        yield annotation
        return
    if origin is typing.Annotated:  # the metadata (a validator) is no type a caller names
        yield from _named_types(get_args(annotation)[0])
        return
    if origin is not typing.Literal:
        yield origin
        for argument in get_args(annotation):
            yield from _named_types(argument)


def _is_allowed(named: object, exported: list[object]) -> bool:
    if any(named is each for each in exported) or named in ALLOWED_THIRD_PARTY:
        return True
    if isinstance(named, typing._SpecialForm | types.UnionType) or named is typing.Union:
        return True
    module = getattr(named, "__module__", "")
    return module.split(".")[0] in sys.stdlib_module_names or module == "builtins"


def _signatures(obj: object) -> typing.Iterator[tuple[str, object]]:
    """(where, annotation) for every annotation an exported object shows a caller."""
    namespace = _namespace()
    if inspect.isfunction(obj):
        parameters = {each.__name__: each for each in obj.__type_params__}
        for name, hint in get_type_hints(obj, localns={**namespace, **parameters}).items():
            yield f"{obj.__qualname__}({name})", hint
        return
    if not inspect.isclass(obj):
        return
    for cls in inspect.getmro(obj):
        if not cls.__module__.startswith("redstring"):
            continue
        globalns = {**vars(sys.modules[cls.__module__]), **namespace}
        for name, hint in inspect.get_annotations(cls).items():
            if not name.startswith("_"):
                resolved = eval(hint, globalns) if isinstance(hint, str) else hint
                yield f"{cls.__qualname__}.{name}", resolved
        for name, member in vars(cls).items():
            if name.startswith("_") and name not in {"__init__", "__aenter__"}:
                continue
            function = member.fget if isinstance(member, property) else member
            if isinstance(function, classmethod | staticmethod):
                function = function.__func__
            if inspect.isfunction(function):
                parameters = {each.__name__: each for each in function.__type_params__}
                hints = get_type_hints(function, globalns=globalns, localns=parameters)
                for argument, hint in hints.items():
                    yield f"{cls.__qualname__}.{name}({argument})", hint
                for parameter in getattr(function, "__type_params__", ()):
                    yield f"{cls.__qualname__}.{name}[{parameter}]", parameter


def test_all_is_sorted_and_has_no_duplicates() -> None:
    assert list(redstring.__all__) == sorted(redstring.__all__, key=_ruff_sort_key)
    assert len(set(redstring.__all__)) == len(redstring.__all__)


def _ruff_sort_key(name: str) -> tuple[int, str]:
    """RUF022's isort-style order: CONSTANTS, then Classes, then everything else."""
    if name.isupper() or (name.upper() == name and "_" in name):
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


def test_every_exported_name_exists() -> None:
    for name in redstring.__all__:
        assert hasattr(redstring, name), name


@pytest.mark.parametrize("name", sorted(set(redstring.__all__) - {"__version__"}))
def test_every_type_an_exported_signature_names_is_exported_or_stdlib(name: str) -> None:
    exported = list(_exported().values())
    offenders = [
        f"{where} names {named!r}"
        for where, annotation in _signatures(getattr(redstring, name))
        for named in _named_types(annotation)
        if not _is_allowed(named, exported)
    ]
    assert offenders == []


def test_the_signature_gate_catches_an_unexported_type() -> None:
    """The gate itself can fail: a type outside the surface is reported."""

    class Hidden:
        pass

    def leaky(value: Hidden) -> list[Hidden]:
        raise NotImplementedError

    exported = list(_exported().values())
    hints = get_type_hints(leaky, localns={"Hidden": Hidden})
    named = [each for hint in hints.values() for each in _named_types(hint)]
    assert not all(_is_allowed(each, exported) for each in named)


def test_every_error_is_exported_so_a_caller_can_catch_it() -> None:
    errors = {cls for cls in _all_classes() if issubclass(cls, RedstringError)}
    exported = {obj for obj in _exported().values() if inspect.isclass(obj)}
    assert errors
    assert sorted(cls.__name__ for cls in errors - exported) == []


def test_every_str_enum_is_pinned_with_its_literal_values() -> None:
    enums = {
        f"{cls.__module__}.{cls.__qualname__}": cls
        for cls in _all_classes()
        if issubclass(cls, enum.StrEnum) and cls is not enum.StrEnum
    }
    assert sorted(enums) == sorted(PINNED_ENUMS)
    for path, members in PINNED_ENUMS.items():
        assert {member.name: member.value for member in enums[path]} == members


def test_the_version_is_a_string() -> None:
    assert redstring.__version__ == "0.3.0"
