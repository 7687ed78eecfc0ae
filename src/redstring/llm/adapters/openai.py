"""A language model and an embedding model behind any OpenAI-compatible HTTP server.

OpenAI, Ollama, vLLM and llama.cpp's server all answer `POST /chat/completions`
and `POST /embeddings` in the same shape, so one adapter pair speaks to all of
them; only `base_url`, `api_key` and the model names differ. `base_url` is the
API root, `/v1` included: `http://localhost:11434/v1` for Ollama,
`https://api.openai.com/v1` for OpenAI. Why one wire format rather than
per-vendor SDKs: ADR 0011.

Both providers share one transport: a `Bearer` token when `api_key` is given;
up to `max_retries` retries on 429, 5xx, timeouts and connection errors,
waiting `backoff * 2**attempt` seconds, or the server's `Retry-After`, both
capped at `MAX_RETRY_DELAY`; no retry on any other status. `timeout` is a
deadline for each attempt as a whole (connecting, sending, and reading the
whole answer), not a limit on each read, so a server that trickles its answer
cannot hold a call past it; an answer larger than `MAX_RESPONSE_BYTES` is
refused without retry. What still fails
becomes an `LlmProviderError` or an `EmbeddingProviderError` naming the model
and the status or transport error. Needs the `http` extra (`httpx`).
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from pydantic import BaseModel, ValidationError

from redstring.domain.exceptions import (
    EmbeddingProviderError,
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
    RefusedCompletionError,
    missing_extra,
)
from redstring.domain.json_safety import check_text
from redstring.domain.limits import MAX_DIMENSION
from redstring.domain.validation import check_integer, check_texts
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.llm import LlmProvider

if TYPE_CHECKING:
    from collections.abc import Sequence

try:
    import httpx
except ImportError as _import_error:
    raise missing_extra("redstring.llm.adapters.openai needs httpx", "http") from _import_error

MAX_RETRY_DELAY: Final = 30.0
"""The longest wait, in seconds, between two attempts, whatever `Retry-After` says."""

MAX_RETRIES: Final = 100
"""The most retries a provider may be asked for: past it, a call would wait for hours."""

MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024
"""The largest answer body, in bytes after decompression, that an attempt reads.

A batch of 64 embeddings of 3,072 dimensions is about 4 MiB of JSON; anything
far past that is a misbehaving server, and reading it would only use memory.
"""

_EXCERPT: Final = 200
"""How many characters of an error response body an error message quotes."""

_FENCE: Final = re.compile(r"\A\s*```[a-zA-Z]*[ \t]*\n?(?P<body>.*?)\n?\s*```\s*\Z", re.DOTALL)
_SCHEMA_NAME_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]")
_SCHEMA_NAME_LENGTH: Final = 64
"""OpenAI's limit on `response_format.json_schema.name`, after `_SCHEMA_NAME_CHARS`."""

_ProviderError = type[LlmProviderError] | type[EmbeddingProviderError]


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _ChatCompletion(BaseModel):
    choices: list[_Choice]


class _Embedding(BaseModel):
    index: int
    embedding: list[float]


class _Embeddings(BaseModel):
    data: list[_Embedding]


def _check_positive_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def _check_seconds(name: str, value: object, *, allow_zero: bool) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not allow_zero)
    ):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number of seconds {bound}, got {value!r}")


def _retry_after(response: httpx.Response) -> float | None:
    """The `Retry-After` header as seconds, or `None` when absent or not a number."""
    try:
        seconds = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


_RETRYABLE_ERRORS: Final = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    TimeoutError,
)
"""Transport failures worth another attempt: timeouts, refused or dropped connections."""


@dataclass(frozen=True, slots=True)
class _Answer:
    """One attempt's response: status and headers, and the body read within the deadline."""

    response: httpx.Response
    content: bytes

    @property
    def status_code(self) -> int:
        return self.response.status_code

    @property
    def is_success(self) -> bool:
        return self.response.is_success

    @property
    def text(self) -> str:
        return self.content.decode(self.response.encoding or "utf-8", errors="replace")


class _TooLargeError(Exception):
    """An answer body passed `MAX_RESPONSE_BYTES`."""


def _is_retryable(status: int) -> bool:
    return status == 429 or status >= 500


def _check_base_url(base_url: object) -> str:
    """The API root without a trailing slash.

    Raises:
        ValueError: `base_url` is blank, holds a NUL or an unpaired
            surrogate, is not an http(s) URL, or has no host.
    """
    if not isinstance(base_url, str) or not base_url.strip():
        raise ValueError(f"base_url must be a non-blank string, got {base_url!r}")
    # Before httpx: it would raise `UnicodeEncodeError` on a surrogate.
    check_text(base_url, field="base_url")
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"base_url is not a valid URL: {base_url!r} ({exc})") from exc
    if url.scheme not in {"http", "https"} or not url.host:
        raise ValueError(
            f"base_url must be an http:// or https:// URL with a host, got {base_url!r}"
        )
    return base_url.rstrip("/")


def _is_token(value: object) -> bool:
    """Whether `value` can be sent as a bearer token: printable ASCII, no whitespace."""
    return (
        isinstance(value, str)
        and value.isascii()
        and value.isprintable()
        and bool(value)
        and not any(char.isspace() for char in value)
    )


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _OpenAiProvider(AsyncClosable):
    """POSTs JSON to one OpenAI-compatible server with retries, and translates every failure.

    The base of both providers. `_failure` is the provider's error class;
    every failure is raised as one, naming `model`, from the `httpx` error
    behind it.
    """

    _failure: ClassVar[_ProviderError]

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-blank string, got {model!r}")
        check_text(model, field="model")
        self._root = _check_base_url(base_url)
        if api_key is not None and not _is_token(api_key):
            # The key itself is never echoed: error messages end up in logs.
            raise ValueError("api_key must be None or non-empty printable ASCII without spaces")
        if client is not None and not isinstance(client, httpx.AsyncClient):
            raise ValueError(f"client must be an httpx.AsyncClient or None, got {client!r}")
        _check_seconds("timeout", timeout, allow_zero=False)
        check_integer(max_retries, argument="max_retries", minimum=0, maximum=MAX_RETRIES)
        _check_seconds("backoff", backoff, allow_zero=True)
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key is not None else {}
        self._owns_client = client is None
        self._client = httpx.AsyncClient() if client is None else client
        self._timeout = timeout
        self._attempts = max_retries + 1
        self._backoff = backoff

    @property
    def model(self) -> str:
        """The model name sent to the server, and reported in errors, events and extracted rows."""
        return self._model

    async def _post[E: BaseModel](self, path: str, payload: dict[str, Any], envelope: type[E]) -> E:
        """POST `payload` to `path` under the API root and validate the answer as `envelope`.

        Raises:
            LlmProviderError | EmbeddingProviderError: (the provider's
                `_failure`) a status other than 2xx or a transport failure,
                after any retries; or a body that is not JSON of the
                `envelope` shape.
        """
        url = f"{self._root}{path}"
        response = await self._send(url, payload)
        try:
            return envelope.model_validate_json(response.content)
        except ValidationError as exc:
            raise self._failure(
                model=self.model,
                reason=f"POST {url} answered with a body that is not the expected JSON "
                f"({_first_error(exc)}): {response.text[:_EXCERPT]!r}",
            ) from exc

    async def _attempt(self, url: str, payload: dict[str, Any]) -> _Answer:
        """One request, answered and read whole within the deadline and the size cap."""
        async with (
            asyncio.timeout(self._timeout),
            # The deadline above governs every phase, so httpx's own per-phase
            # timeouts (on a handed-in client too) are switched off.
            self._client.stream(
                "POST", url, json=payload, headers=self._headers, timeout=None
            ) as response,
        ):
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise _TooLargeError
            return _Answer(response, bytes(body))

    async def _send(self, url: str, payload: dict[str, Any]) -> _Answer:
        attempt = 0
        while True:
            attempt += 1
            final = attempt == self._attempts
            try:
                answer = await self._attempt(url, payload)
            except TimeoutError as exc:
                if final:
                    what = f"no complete answer within the {self._timeout} s deadline"
                    raise self._failed(url, attempt, what) from exc
                delay = self._delay(attempt, None)
            except _RETRYABLE_ERRORS as exc:
                if final:
                    raise self._failed(url, attempt, _describe(exc)) from exc
                delay = self._delay(attempt, None)
            except _TooLargeError as exc:
                what = f"the answer is larger than MAX_RESPONSE_BYTES ({MAX_RESPONSE_BYTES})"
                raise self._failed(url, attempt, what) from exc
            except httpx.HTTPError as exc:
                raise self._failed(url, attempt, _describe(exc)) from exc
            else:
                if answer.is_success:
                    return answer
                if final or not _is_retryable(answer.status_code):
                    raise self._status_error(url, answer, attempt) from httpx.HTTPStatusError(
                        f"HTTP {answer.status_code}",
                        request=answer.response.request,
                        response=answer.response,
                    )
                delay = self._delay(attempt, _retry_after(answer.response))
            await asyncio.sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        wanted = self._backoff * 2 ** (attempt - 1) if retry_after is None else retry_after
        return min(wanted, MAX_RETRY_DELAY)

    def _status_error(
        self, url: str, response: _Answer, attempts: int
    ) -> LlmProviderError | EmbeddingProviderError:
        hint = " (is base_url the API root, /v1 included?)" if response.status_code == 404 else ""
        excerpt = response.text[:_EXCERPT]
        return self._failed(url, attempts, f"HTTP {response.status_code}{hint}: {excerpt!r}")

    def _failed(
        self, url: str, attempts: int, what: str
    ) -> LlmProviderError | EmbeddingProviderError:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return self._failure(model=self.model, reason=f"POST {url} failed{tries}: {what}")

    async def _release(self) -> None:
        """Close the HTTP client if this adapter created it; a handed-in one stays open."""
        if self._owns_client:
            await self._client.aclose()

    def _resource_name(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"


class OpenAiCompatibleLlmProvider(_OpenAiProvider, LlmProvider):
    """An `LlmProvider` that asks a chat-completions endpoint for JSON matching the schema.

    Each `extract` is one `POST {base_url}/chat/completions` (plus retries)
    at temperature 0, with the system prompt, the text as the user message,
    and `response_format` of type `json_schema` carrying
    `schema.model_json_schema()` (not strict, so optional fields and defaults
    are allowed). The answer is validated against `schema` whether or not
    the server enforced it; a ```` ```json ```` fence around it is removed.

    `base_url` is the API root with `/v1`, e.g. `http://localhost:11434/v1`.
    `timeout` (seconds) is a deadline for each attempt as a whole, from
    connecting to the last byte of the answer, on a handed-in `client` too;
    see the module docstring. The adapter closes only a client it created; see the module
    docstring for retries.

    Raises:
        ValueError: a blank `model` or `base_url`, a NUL or an unpaired
            surrogate in either, a `base_url` that is not http(s), an
            `api_key` that is not printable ASCII, `timeout <= 0`, `max_retries < 0` or
            `backoff < 0`.
    """

    _failure = LlmProviderError

    async def extract[S: BaseModel](
        self, text: str, schema: type[S], *, system_prompt: str | None = None
    ) -> S:
        """Ask the model about `text` and return its answer as a `schema` instance.

        Raises:
            RefusedCompletionError: the message carries a `refusal`.
            EmptyCompletionError: the message content is missing or blank.
            MalformedCompletionError: the content is not JSON valid against `schema`.
            LlmProviderError: the server failed, after retries, or answered
                with something that is not a chat completion.
            ValueError: `text` or `system_prompt` is not a string no request
                could carry, or `schema` is not a pydantic model.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {text!r}")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise ValueError(f"schema must be a pydantic model class, got {schema!r}")
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise ValueError(f"system_prompt must be a string or None, got {system_prompt!r:.60}")
        check_text(text, field="text")
        if system_prompt is not None:
            check_text(system_prompt, field="system_prompt")
        messages: list[dict[str, str]] = []
        if system_prompt:
            messages.append({"role": "system", "content": system_prompt})
        messages.append({"role": "user", "content": text})
        name = _SCHEMA_NAME_CHARS.sub("_", schema.__name__)[:_SCHEMA_NAME_LENGTH]
        completion = await self._post(
            "/chat/completions",
            {
                "model": self.model,
                "messages": messages,
                "temperature": 0,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {
                        "name": name,
                        "schema": schema.model_json_schema(),
                        "strict": False,
                    },
                },
            },
            _ChatCompletion,
        )
        if not completion.choices:
            raise LlmProviderError(model=self.model, reason="the completion has no choices")
        choice = completion.choices[0]
        if choice.message.refusal:
            raise RefusedCompletionError(model=self.model, refusal=choice.message.refusal)
        content = choice.message.content
        if content is None or not content.strip():
            raise EmptyCompletionError(model=self.model)
        fenced = _FENCE.match(content)
        answer = fenced.group("body") if fenced else content
        try:
            return schema.model_validate_json(answer)
        except ValidationError as exc:
            stopped = (
                f" (finish_reason {choice.finish_reason!r})"
                if choice.finish_reason not in {None, "stop"}
                else ""
            )
            raise MalformedCompletionError(model=self.model, detail=f"{exc}{stopped}") from exc


class OpenAiCompatibleEmbeddingProvider(_OpenAiProvider, EmbeddingProvider):
    """An `EmbeddingProvider` over an embeddings endpoint, in batches of `batch_size` texts.

    Each batch is one `POST {base_url}/embeddings` (plus retries) with
    `{"model": model, "input": [...]}`; batches are sent one after another.
    Vectors are put back in input order by each item's `index`. `dimension`
    is what you declare, and every vector is checked against it (e.g. 768
    for `nomic-embed-text`, 1536 for `text-embedding-3-small`).

    `base_url`, `timeout`, `client` and retries are as for
    `OpenAiCompatibleLlmProvider`.

    Raises:
        ValueError: as for `OpenAiCompatibleLlmProvider`, or `dimension < 1`
            or `batch_size < 1`.
    """

    _failure = EmbeddingProviderError

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimension: int,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        check_integer(dimension, argument="dimension", minimum=1, maximum=MAX_DIMENSION)
        _check_positive_int("batch_size", batch_size, minimum=1)
        super().__init__(
            base_url=base_url,
            model=model,
            api_key=api_key,
            client=client,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
        )
        self._dimension = dimension
        self._batch_size = batch_size

    @property
    def dimension(self) -> int:
        """The length of every vector this provider returns, as declared."""
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order; `[]` for `[]` without a request.

        Raises:
            EmbeddingProviderError: the server failed, after retries; or
                answered with something other than one finite vector of
                `dimension` floats per text, indexed 0..n-1 once each. A
                wrong length is this error, as the port says, not
                `DimensionMismatchError`.
            ValueError: `texts` is a string or not a sequence, or an item is
                not a string (the index is named).
        """
        batch = check_texts(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(batch), self._batch_size):
            vectors.extend(await self._embed_batch(batch[start : start + self._batch_size], start))
        return vectors

    async def _embed_batch(self, batch: list[str], start: int) -> list[list[float]]:
        answer = await self._post("/embeddings", {"model": self.model, "input": batch}, _Embeddings)
        items = sorted(answer.data, key=lambda item: item.index)
        if len(items) != len(batch):
            raise self._error(f"asked for {len(batch)} vectors, got {len(items)}", start)
        if [item.index for item in items] != list(range(len(batch))):
            indices = sorted(item.index for item in answer.data)
            raise self._error(
                f"item indices {indices} are not 0..{len(batch) - 1} once each", start
            )
        for item in items:
            if len(item.embedding) != self._dimension:
                raise self._error(
                    f"vector {item.index} has {len(item.embedding)} dimensions, "
                    f"expected {self._dimension}",
                    start,
                )
            if not all(map(math.isfinite, item.embedding)):
                raise self._error(f"vector {item.index} has a non-finite component", start)
        return [item.embedding for item in items]

    def _error(self, reason: str, start: int) -> EmbeddingProviderError:
        return EmbeddingProviderError(
            model=self.model, reason=f"{reason} (batch starting at texts[{start}])"
        )
