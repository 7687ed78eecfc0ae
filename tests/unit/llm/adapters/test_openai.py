"""The OpenAI-compatible adapters against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import socket
import sys
from typing import TYPE_CHECKING, Any
from uuid import UUID

import httpx
import pytest
from pydantic import BaseModel

from redstring import (
    InMemoryGraphStore,
    InMemoryVectorStore,
    Retriever,
    SourceDocument,
    SourceId,
    TenantId,
    build_graph,
)
from redstring.domain.exceptions import (
    ClosedError,
    EmbeddingProviderError,
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
    RefusedCompletionError,
)
from redstring.llm.adapters import openai
from redstring.llm.adapters.openai import (
    OpenAiCompatibleEmbeddingProvider,
    OpenAiCompatibleLlmProvider,
)
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.llm import LlmProvider
from redstring.testing.lifetime import LifetimeCompliance
from tests.unit.llm.adapters.openai_server import FakeOpenAiServer, Reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

CHAT = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"
MODEL = "llama3.2"
EMBEDDING_MODEL = "nomic-embed-text"
#: Small enough that a retry costs nothing measurable.
TINY = 0.001


class Person(BaseModel):
    name: str
    born: int | None = None


def completion(
    content: str | None, *, refusal: str | None = None, finish_reason: str = "stop"
) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "refusal": refusal}
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


def embedded(vectors: dict[int, list[float]]) -> dict[str, Any]:
    """An embeddings answer whose items come in the dict's order, each with its index."""
    items = [{"object": "embedding", "index": i, "embedding": v} for i, v in vectors.items()]
    return {"object": "list", "data": items, "model": EMBEDDING_MODEL}


def vector_for(text: str) -> list[float]:
    """A 2-dimensional vector that says which text it belongs to."""
    return [float(len(text)), float(ord(text[0]))]


@pytest.fixture
def server() -> Iterator[FakeOpenAiServer]:
    server = FakeOpenAiServer().start()
    yield server
    server.stop()
    assert server.unexpected == []


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """A client handed to the adapters, as an application would share one.

    The server is plain HTTP, so the transport skips loading CA certificates
    (about 40 ms a client); the adapters' own clients are tested separately.
    """
    async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(verify=False)) as client:
        yield client


def llm(
    server: FakeOpenAiServer, client: httpx.AsyncClient, **overrides: Any
) -> OpenAiCompatibleLlmProvider:
    arguments: dict[str, Any] = {
        "base_url": server.base_url,
        "client": client,
        "model": MODEL,
        "backoff": TINY,
        "timeout": 2.0,
        **overrides,
    }
    return OpenAiCompatibleLlmProvider(**arguments)


def embedder(
    server: FakeOpenAiServer, client: httpx.AsyncClient, **overrides: Any
) -> OpenAiCompatibleEmbeddingProvider:
    arguments: dict[str, Any] = {
        "base_url": server.base_url,
        "client": client,
        "model": EMBEDDING_MODEL,
        "dimension": 2,
        "backoff": TINY,
        "timeout": 2.0,
        **overrides,
    }
    return OpenAiCompatibleEmbeddingProvider(**arguments)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_the_adapters_satisfy_their_ports_and_the_lifetime_port(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    async with llm(server, client) as model, embedder(server, client) as embeddings:
        assert isinstance(model, LlmProvider)
        assert isinstance(embeddings, EmbeddingProvider)
        assert isinstance(model, AsyncClosable)
        assert isinstance(embeddings, AsyncClosable)
        assert (model.model, embeddings.model, embeddings.dimension) == (
            "llama3.2",
            "nomic-embed-text",
            2,
        )


# --- chat completions: the request ----------------------------------------------------------


async def test_a_structured_answer_is_parsed_into_the_schema(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ada Lovelace", "born": 1815}')))

    async with llm(server, client) as model:
        answer = await model.extract("Ada Lovelace was born in 1815.", Person)

    assert answer == Person(name="Ada Lovelace", born=1815)


async def test_the_request_carries_model_messages_json_schema_and_bearer_token(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ada"}')))

    async with llm(server, client, api_key="sk-test-123") as model:
        await model.extract("Ada wrote.", Person, system_prompt="Find people.")

    [request] = server.requests()
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.json() == {
        "model": "llama3.2",
        "messages": [
            {"role": "system", "content": "Find people."},
            {"role": "user", "content": "Ada wrote."},
        ],
        "temperature": 0,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "Person",
                "schema": Person.model_json_schema(),
                "strict": False,
            },
        },
    }


async def test_without_a_system_prompt_or_api_key_only_the_user_message_is_sent_unauthorized(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ada"}')))

    async with llm(server, client) as model:
        await model.extract("Ada wrote.", Person)

    [request] = server.requests()
    assert "authorization" not in request.headers
    assert request.json()["messages"] == [{"role": "user", "content": "Ada wrote."}]


async def test_a_schema_name_outside_openais_alphabet_is_sanitized(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    class Pair[T](BaseModel):
        left: T

    server.reply(CHAT, Reply(completion('{"left": 1}')))

    async with llm(server, client) as model:
        assert (await model.extract("one", Pair[int])).left == 1

    assert server.requests()[0].json()["response_format"]["json_schema"]["name"] == "Pair_int_"


@pytest.mark.parametrize("suffix", ["", "/", "//"])
async def test_the_base_url_may_end_in_a_slash_or_not(
    server: FakeOpenAiServer, suffix: str, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ada"}')))

    async with llm(server, client, base_url=server.base_url + suffix) as model:
        await model.extract("Ada", Person)

    assert [request.path for request in server.requests()] == ["/v1/chat/completions"]


# --- chat completions: the answer -----------------------------------------------------------


async def test_a_refusal_raises_refused_completion_error(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion(None, refusal="I can't help with that.")))

    async with llm(server, client) as model:
        with pytest.raises(RefusedCompletionError) as caught:
            await model.extract("text", Person)

    assert (caught.value.model, caught.value.refusal) == ("llama3.2", "I can't help with that.")


@pytest.mark.parametrize("content", [None, "", " \n\t"])
async def test_missing_or_blank_content_raises_empty_completion_error(
    server: FakeOpenAiServer, content: str | None, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion(content)))

    async with llm(server, client) as model:
        with pytest.raises(EmptyCompletionError) as caught:
            await model.extract("text", Person)

    assert caught.value.model == "llama3.2"


@pytest.mark.parametrize(
    "content",
    [
        "Ada Lovelace, born 1815",  # prose from a server that ignored response_format
        '{"name": "Ada"',  # cut off
        '{"born": 1815}',  # JSON, but misses a required field
        '{"name": "Ada", "born": "eighteen fifteen"}',
        "[]",
    ],
)
async def test_content_that_is_not_json_of_the_schema_raises_malformed_completion_error(
    server: FakeOpenAiServer, content: str, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion(content)))

    async with llm(server, client) as model:
        with pytest.raises(MalformedCompletionError) as caught:
            await model.extract("text", Person)

    assert caught.value.model == "llama3.2"
    assert caught.value.detail


async def test_a_truncated_answer_names_the_finish_reason(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ad', finish_reason="length")))

    async with llm(server, client) as model:
        with pytest.raises(MalformedCompletionError, match="finish_reason 'length'"):
            await model.extract("text", Person)


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"name": "Ada"}\n```',
        '```JSON\n{"name": "Ada"}\n```\n',
        '  ```\n{"name": "Ada"}\n```',
        '```{"name": "Ada"}```',
    ],
)
async def test_json_in_a_code_fence_is_unwrapped(
    server: FakeOpenAiServer, content: str, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion(content)))

    async with llm(server, client) as model:
        assert await model.extract("text", Person) == Person(name="Ada")


@pytest.mark.parametrize(
    "body",
    [
        b"<html>Bad Gateway</html>",
        b"",
        {},
        {"choices": []},
        {"choices": "none"},
        {"choices": [{"message": "hello"}]},
        {"choices": [{"message": {"content": 7}}]},
        [],
    ],
)
async def test_a_body_that_is_not_a_chat_completion_is_a_provider_error(
    server: FakeOpenAiServer, body: object, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(body))

    async with llm(server, client) as model:
        with pytest.raises(LlmProviderError) as caught:
            await model.extract("text", Person)

    assert type(caught.value) is LlmProviderError
    assert caught.value.model == "llama3.2"
    assert len(server.requests()) == 1


@pytest.mark.parametrize(
    ("text", "schema", "named"),
    [
        (b"Ada", Person, "text"),
        ("Ada", dict, "schema"),
        ("Ada", Person(name="Ada"), "schema"),
        ("Ada\x00", Person, "text"),
    ],
)
async def test_a_text_or_schema_of_the_wrong_type_is_refused_before_a_request(
    server: FakeOpenAiServer, client: httpx.AsyncClient, text: Any, schema: Any, named: str
) -> None:
    async with llm(server, client) as model:
        with pytest.raises(ValueError, match=named):
            await model.extract(text, schema)

    assert server.requests() == []


# --- the shared transport: retries and errors -------------------------------------------------


async def test_a_429_is_retried_after_the_seconds_retry_after_asks_for(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(
        CHAT,
        Reply({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0.15"}),
        Reply(completion('{"name": "Ada"}')),
    )

    async with llm(server, client, backoff=TINY) as model:
        assert await model.extract("text", Person) == Person(name="Ada")

    first, second = server.requests()
    assert second.received_at - first.received_at >= 0.15


async def test_retry_after_is_capped_at_max_retry_delay(
    server: FakeOpenAiServer, monkeypatch: pytest.MonkeyPatch, client: httpx.AsyncClient
) -> None:
    """The wait asked for is read, not timed: a loaded machine stretches every clock."""
    monkeypatch.setattr(openai, "MAX_RETRY_DELAY", 0.01)
    waits: list[float] = []
    delay = openai._OpenAiProvider._delay

    def recorded(self: Any, attempt: int, retry_after: float | None) -> float:
        waits.append(delay(self, attempt, retry_after))
        return 0.0  # a cap that failed fails this test, rather than hanging it

    monkeypatch.setattr(openai._OpenAiProvider, "_delay", recorded)
    server.reply(
        CHAT,
        Reply(status=503, headers={"Retry-After": "3600"}),
        Reply(completion('{"name": "Ada"}')),
    )

    async with llm(server, client) as model:
        await model.extract("text", Person)

    assert waits == [0.01]


async def test_without_retry_after_the_wait_doubles_from_backoff(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, *[Reply(status=502)] * 3, Reply(completion('{"name": "Ada"}')))

    async with llm(server, client, backoff=0.02, max_retries=3) as model:
        await model.extract("text", Person)

    times = [request.received_at for request in server.requests()]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(gaps) == 3
    assert gaps[0] >= 0.02
    assert gaps[1] >= 0.04
    assert gaps[2] >= 0.08


async def test_a_persistent_500_fails_after_max_retries_plus_one_attempts_naming_model_and_status(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, *[Reply({"error": {"message": "boom"}}, status=500)] * 3)

    async with llm(server, client, max_retries=2) as model:
        with pytest.raises(LlmProviderError) as caught:
            await model.extract("text", Person)

    assert len(server.requests()) == 3
    assert type(caught.value) is LlmProviderError
    assert caught.value.model == "llama3.2"
    assert "HTTP 500" in caught.value.reason
    assert "after 3 attempts" in caught.value.reason
    assert "boom" in caught.value.reason
    assert isinstance(caught.value.__cause__, httpx.HTTPStatusError)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_a_client_error_other_than_429_is_not_retried(
    server: FakeOpenAiServer, status: int, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply({"error": {"message": "model not found"}}, status=status))

    async with llm(server, client, api_key="sk-secret-value", max_retries=3) as model:
        with pytest.raises(LlmProviderError) as caught:
            await model.extract("text", Person)

    assert len(server.requests()) == 1
    assert f"HTTP {status}" in str(caught.value)
    assert "model not found" in str(caught.value)
    assert "sk-secret-value" not in str(caught.value)


async def test_a_broken_response_encoding_is_not_retried(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(b"not gzip at all", headers={"Content-Encoding": "gzip"}))

    async with llm(server, client, max_retries=3) as model:
        with pytest.raises(LlmProviderError) as caught:
            await model.extract("text", Person)

    assert len(server.requests()) == 1
    assert "DecodingError" in caught.value.reason
    assert isinstance(caught.value.__cause__, httpx.DecodingError)


async def test_a_404_hints_that_base_url_must_include_v1(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(status=404))

    async with llm(server, client) as model:
        with pytest.raises(LlmProviderError, match=r"/v1 included"):
            await model.extract("text", Person)


class CountingTransport(httpx.AsyncBaseTransport):
    """The real transport, counting the requests the client hands it."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport(verify=False)
        self.sent = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_a_timeout_is_retried_then_reported_as_a_provider_error(
    server: FakeOpenAiServer,
) -> None:
    """Every reply is held, so each attempt times out however loaded the machine is.

    The attempts are counted where the client sends them: whether the server
    reads a request before the client gives up on it is the clock's call.
    """
    held = Reply(completion('{"name": "Ada"}'), hold=True)
    server.reply(CHAT, held, held)
    transport = CountingTransport()

    async with (
        httpx.AsyncClient(transport=transport) as client,
        llm(server, client, timeout=0.2, max_retries=1) as model,
    ):
        with pytest.raises(LlmProviderError) as caught:
            await model.extract("text", Person)

    assert transport.sent == 2
    assert type(caught.value) is LlmProviderError
    assert "after 2 attempts: no complete answer within the 0.2 s deadline" in caught.value.reason
    assert isinstance(caught.value.__cause__, TimeoutError)


async def test_a_timeout_followed_by_an_answer_succeeds(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    """The first reply never comes, so the retry is certain; the second has the whole deadline."""
    server.reply(
        CHAT,
        Reply(completion('{"name": "Held"}'), hold=True),
        Reply(completion('{"name": "Ada"}')),
    )

    async with llm(server, client, timeout=0.5, max_retries=1) as model:
        assert await model.extract("text", Person) == Person(name="Ada")


@pytest.mark.parametrize("make", [llm, embedder])
async def test_a_trickling_answer_is_cut_off_at_the_deadline_not_per_read(
    server: FakeOpenAiServer, client: httpx.AsyncClient, make: Any
) -> None:
    """A byte every 0.05 s never trips a per-read timeout; the whole answer would take 10 s."""
    trickling = Reply(completion('{"name": "Ada"}' + " " * 150), trickle=0.05)
    server.reply(CHAT, trickling)
    server.reply(EMBEDDINGS, Reply({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}, trickle=0.05))

    async with make(server, client, timeout=0.3, max_retries=0) as model:
        call = model.extract("text", Person) if make is llm else model.embed(["text"])
        with pytest.raises((LlmProviderError, EmbeddingProviderError), match=r"0\.3 s deadline"):
            await call


async def test_an_answer_past_the_size_cap_is_refused_without_retry(
    server: FakeOpenAiServer, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai, "MAX_RESPONSE_BYTES", 1_000)
    server.reply(CHAT, Reply(completion("x" * 2_000)), Reply(completion('{"name": "Ada"}')))

    async with llm(server, client, max_retries=1) as model:
        with pytest.raises(LlmProviderError, match=r"larger than MAX_RESPONSE_BYTES \(1000\)"):
            await model.extract("text", Person)
        assert await model.extract("text", Person) == Person(name="Ada")
    assert len(server.requests()) == 2


async def test_a_refused_connection_is_retried_then_reported_as_a_provider_error() -> None:
    port = free_port()
    model = OpenAiCompatibleLlmProvider(
        base_url=f"http://127.0.0.1:{port}/v1", model=MODEL, max_retries=1, backoff=TINY
    )

    async with model:
        with pytest.raises(LlmProviderError) as caught:
            await model.extract("text", Person)

    assert "after 2 attempts" in caught.value.reason
    assert f"127.0.0.1:{port}" in caught.value.reason
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


async def test_the_embedding_provider_shares_the_transport_and_raises_its_own_error(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(EMBEDDINGS, Reply(status=500), Reply(status=500))

    async with embedder(server, client, max_retries=1, api_key="sk-embed") as embeddings:
        with pytest.raises(EmbeddingProviderError) as caught:
            await embeddings.embed(["Ada"])

    assert caught.value.model == "nomic-embed-text"
    assert "HTTP 500" in caught.value.reason
    assert [r.headers["authorization"] for r in server.requests()] == ["Bearer sk-embed"] * 2


# --- embeddings ---------------------------------------------------------------------------------


async def test_texts_are_sent_in_batches_and_vectors_come_back_in_input_order(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    texts = ["Ada", "Babbage", "Cambridge", "Dee", "Engine"]
    batches = [texts[0:2], texts[2:4], texts[4:5]]
    for batch in batches:
        # Answered in reverse index order, as a server may.
        items = {index: vector_for(text) for index, text in enumerate(batch)}
        server.reply(EMBEDDINGS, Reply(embedded(dict(reversed(items.items())))))

    async with embedder(server, client, batch_size=2) as embeddings:
        vectors = await embeddings.embed(texts)

    assert vectors == [vector_for(text) for text in texts]
    sent = [request.json() for request in server.requests()]
    assert sent == [{"model": "nomic-embed-text", "input": batch} for batch in batches]


async def test_no_texts_make_no_request(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    async with embedder(server, client) as embeddings:
        assert await embeddings.embed([]) == []

    assert server.requests() == []


@pytest.mark.parametrize(
    ("items", "complaint"),
    [
        ([(0, [1.0, 2.0])], "asked for 2 vectors, got 1"),
        ([(0, [1.0, 2.0]), (1, [3.0, 4.0]), (2, [5.0, 6.0])], "asked for 2 vectors, got 3"),
        ([(0, [1.0, 2.0]), (1, [3.0, 4.0, 5.0])], "vector 1 has 3 dimensions, expected 2"),
        ([(0, [1.0]), (1, [3.0, 4.0])], "vector 0 has 1 dimensions, expected 2"),
        ([(0, [1.0, 2.0]), (2, [3.0, 4.0])], "indices [0, 2]"),
        ([(1, [1.0, 2.0]), (1, [3.0, 4.0])], "indices [1, 1]"),
    ],
)
async def test_a_wrong_count_dimension_or_index_is_an_embedding_provider_error(
    server: FakeOpenAiServer,
    items: list[tuple[int, list[float]]],
    complaint: str,
    client: httpx.AsyncClient,
) -> None:
    data = [{"index": index, "embedding": vector} for index, vector in items]
    server.reply(EMBEDDINGS, Reply({"data": data}))

    async with embedder(server, client, dimension=2) as embeddings:
        with pytest.raises(EmbeddingProviderError) as caught:
            await embeddings.embed(["Ada", "Babbage"])

    assert caught.value.model == "nomic-embed-text"
    assert complaint in caught.value.reason


async def test_a_non_finite_component_is_an_embedding_provider_error(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(EMBEDDINGS, Reply(b'{"data": [{"index": 0, "embedding": [NaN, 1.0]}]}'))

    async with embedder(server, client) as embeddings:
        with pytest.raises(EmbeddingProviderError, match="non-finite"):
            await embeddings.embed(["Ada"])


@pytest.mark.parametrize(
    "body",
    [b"not json", {}, {"data": "none"}, {"data": [{"index": 0}]}, {"data": [{"embedding": [1]}]}],
)
async def test_a_body_that_is_not_an_embeddings_list_is_an_embedding_provider_error(
    server: FakeOpenAiServer, body: object, client: httpx.AsyncClient
) -> None:
    server.reply(EMBEDDINGS, Reply(body))

    async with embedder(server, client) as embeddings:
        with pytest.raises(EmbeddingProviderError) as caught:
            await embeddings.embed(["Ada"])

    assert caught.value.model == "nomic-embed-text"


@pytest.mark.parametrize("texts", ["Ada", [b"Ada"], ["Ada", 7], 7])
async def test_texts_that_are_not_a_sequence_of_strings_are_refused_before_a_request(
    server: FakeOpenAiServer, texts: Any, client: httpx.AsyncClient
) -> None:
    async with embedder(server, client) as embeddings:
        with pytest.raises(ValueError, match="texts"):
            await embeddings.embed(texts)

    assert server.requests() == []


# --- wired into build_graph and Retriever, as the how-to shows ------------------------------------


async def test_build_graph_and_retriever_work_through_both_adapters(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    answer = {
        "entities": [
            {"name": "Ada Lovelace", "entity_type": "person"},
            {"name": "Charles Babbage", "entity_type": "person"},
        ],
        "relationships": [
            {
                "source_name": "Ada Lovelace",
                "target_name": "Charles Babbage",
                "relationship_type": "corresponded_with",
            }
        ],
    }
    ada, babbage = [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]
    server.reply(CHAT, Reply(completion(json.dumps(answer))))
    server.reply(
        EMBEDDINGS,
        Reply(embedded({1: babbage, 0: ada})),  # entity names, in build_graph's order
        Reply(embedded({0: [0.9, 0.1, 0.0, 0.0]})),  # the query
    )
    tenant = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
    text = "Ada Lovelace wrote to Charles Babbage."
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=4)

    async with llm(server, client) as model, embedder(server, client, dimension=4) as embeddings:
        report = await build_graph(
            SourceDocument(id=SourceId("letters/1843-07"), text=text),
            provider=model,
            store=graph,
            tenant_id=tenant,
            embedding_provider=embeddings,
            vector_store=vectors,
        )
        retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
        result = await retriever.retrieve("Ada Lovelace", tenant, k=2)

    assert (report.entities, report.relationships, report.embedded) == (2, 1, 2)
    assert [match.entity.name for match in result.matches] == ["Ada Lovelace", "Charles Babbage"]
    assert [match.entity.model for match in result.matches] == ["llama3.2", "llama3.2"]
    chat = server.requests(CHAT)[0].json()
    assert [message["role"] for message in chat["messages"]] == ["system", "user"]
    assert chat["messages"][1]["content"] == text
    assert chat["response_format"]["json_schema"]["name"] == "Extraction"
    names, query = (request.json()["input"] for request in server.requests(EMBEDDINGS))
    assert names == ["Ada Lovelace", "Charles Babbage"]
    assert query == ["Ada Lovelace"]


# --- lifetime -------------------------------------------------------------------------------------


async def test_a_handed_in_client_is_left_open_by_close(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ada"}')))
    server.reply(EMBEDDINGS, Reply(embedded({0: [1.0, 2.0]})), Reply(embedded({0: [3.0, 4.0]})))

    model = llm(server, client)
    embeddings = embedder(server, client)
    await model.extract("Ada", Person)
    await embeddings.embed(["Ada"])
    await model.close()
    await embeddings.close()

    assert (model.closed, embeddings.closed) == (True, True)
    assert not client.is_closed
    # Still usable by its owner, over the connection it kept alive.
    response = await client.post(f"{server.base_url}/embeddings", json={"input": ["x"]})
    assert response.status_code == 200
    assert server.closed_connections == 0


async def test_an_own_client_is_closed_by_close_once(server: FakeOpenAiServer) -> None:
    server.reply(CHAT, Reply(completion('{"name": "Ada"}')))
    model = OpenAiCompatibleLlmProvider(base_url=server.base_url, model=MODEL)
    await model.extract("Ada", Person)

    await model.close()
    await model.close()

    # Returns as soon as the server sees the close; the bound only stops a hang.
    assert await asyncio.to_thread(server.wait_for_closed_connections, 1, timeout=60.0)
    assert server.closed_connections == 1
    assert model.closed


async def test_leaving_the_context_closes_and_lets_the_exception_through(
    server: FakeOpenAiServer,
) -> None:
    embeddings = OpenAiCompatibleEmbeddingProvider(
        base_url=server.base_url, model=EMBEDDING_MODEL, dimension=2
    )

    async def fail_inside() -> None:
        async with embeddings as entered:
            assert entered is embeddings
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        await fail_inside()

    assert embeddings.closed


class TestOpenAiLlmLifetime(LifetimeCompliance):
    port = LlmProvider

    def new_adapter(self) -> OpenAiCompatibleLlmProvider:
        return OpenAiCompatibleLlmProvider(
            base_url=f"http://127.0.0.1:{free_port()}/v1", model=MODEL
        )


class TestOpenAiEmbeddingLifetime(LifetimeCompliance):
    port = EmbeddingProvider

    def new_adapter(self) -> OpenAiCompatibleEmbeddingProvider:
        return OpenAiCompatibleEmbeddingProvider(
            base_url=f"http://127.0.0.1:{free_port()}/v1", model=EMBEDDING_MODEL, dimension=2
        )


async def test_a_closed_adapter_sends_nothing_and_leaves_a_handed_in_client_open(
    server: FakeOpenAiServer, client: httpx.AsyncClient
) -> None:
    model = llm(server, client)
    embeddings = embedder(server, client)
    await model.close()
    await embeddings.close()

    with pytest.raises(ClosedError, match=r"OpenAiCompatibleLlmProvider\(model='llama3.2'\)"):
        await model.extract("Ada", Person)
    with pytest.raises(ClosedError, match="nomic-embed-text"):
        await embeddings.embed(["Ada"])

    assert server.requests() == []
    assert not client.is_closed


# --- construction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"model": ""}, "model"),
        ({"model": "   "}, "model"),
        ({"base_url": ""}, "base_url"),
        ({"base_url": "localhost:11434/v1"}, "'localhost:11434/v1'"),
        ({"base_url": "ftp://example.test/v1"}, "'ftp://example.test/v1'"),
        ({"base_url": "http:///v1"}, "'http:///v1'"),
        ({"base_url": "http://[::1/v1"}, "base_url"),
        ({"api_key": ""}, "api_key"),
        ({"api_key": " "}, "api_key"),
        ({"api_key": "sk-abc\n"}, "api_key"),
        ({"api_key": "sk-ä"}, "api_key"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1.0}, "-1.0"),
        ({"timeout": float("inf")}, "inf"),
        ({"max_retries": -1}, "-1"),
        ({"max_retries": 1.5}, "1.5"),
        ({"max_retries": True}, "True"),
        ({"max_retries": 2**64}, "max_retries must be within 0..100"),
        ({"backoff": -0.5}, "-0.5"),
        ({"client": "not a client"}, "client"),
    ],
)
@pytest.mark.parametrize(
    "adapter", [OpenAiCompatibleLlmProvider, OpenAiCompatibleEmbeddingProvider]
)
def test_bad_constructor_arguments_raise_value_error_naming_the_value(
    adapter: type[Any], overrides: dict[str, Any], named: str
) -> None:
    arguments: dict[str, Any] = {"base_url": "http://127.0.0.1:1/v1", "model": "m"}
    if adapter is OpenAiCompatibleEmbeddingProvider:
        arguments["dimension"] = 2

    with pytest.raises(ValueError, match=named.replace("[", r"\[")):
        adapter(**{**arguments, **overrides})


#: An unpaired surrogate, built at runtime rather than written as a literal.
_SURROGATE = chr(0xD800)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"base_url": _SURROGATE}, "base_url"),
        ({"base_url": f"http://example.test/v1{_SURROGATE}"}, "base_url"),
        ({"base_url": f"http://{_SURROGATE}.test/v1"}, "base_url"),
        ({"base_url": f"http://example.test/v1?q={_SURROGATE}"}, "base_url"),
        ({"base_url": "http://example.test/v1\x00"}, "base_url"),
        ({"model": f"llama{_SURROGATE}"}, "model"),
        ({"model": "llama\x00"}, "model"),
        ({"api_key": f"sk-{_SURROGATE}"}, "api_key"),
    ],
)
@pytest.mark.parametrize(
    "adapter", [OpenAiCompatibleLlmProvider, OpenAiCompatibleEmbeddingProvider]
)
def test_text_no_request_could_carry_is_a_value_error_naming_the_argument(
    adapter: type[Any], overrides: dict[str, Any], named: str
) -> None:
    """Not the `UnicodeEncodeError` (a `ValueError` too) of encoding it, at the first request."""
    arguments: dict[str, Any] = {"base_url": "http://127.0.0.1:1/v1", "model": "m"}
    if adapter is OpenAiCompatibleEmbeddingProvider:
        arguments["dimension"] = 2

    with pytest.raises(ValueError, match=named) as caught:
        adapter(**{**arguments, **overrides})
    assert not isinstance(caught.value, UnicodeError)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"dimension": 0}, "dimension must be within 1..65536, got 0"),
        ({"dimension": 7.0}, "dimension must be an integer, got float 7.0"),
        ({"batch_size": 0}, "batch_size must be an int >= 1, got 0"),
    ],
)
def test_bad_embedding_arguments_raise_value_error_naming_the_value(
    overrides: dict[str, Any], named: str
) -> None:
    arguments: dict[str, Any] = {"base_url": "http://127.0.0.1:1/v1", "model": "m", "dimension": 2}

    with pytest.raises(ValueError, match=named):
        OpenAiCompatibleEmbeddingProvider(**{**arguments, **overrides})


def test_without_httpx_the_import_fails_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    monkeypatch.delitem(sys.modules, "redstring.llm.adapters.openai")

    with pytest.raises(ImportError, match=r"redstring\[http\]"):
        importlib.import_module("redstring.llm.adapters.openai")


@pytest.mark.parametrize("prompt", [b"Extract.", f"Extract{chr(0xD800)}"])
async def test_a_system_prompt_no_request_could_carry_is_refused_before_a_request(
    server: FakeOpenAiServer, client: httpx.AsyncClient, prompt: Any
) -> None:
    async with llm(server, client) as model:
        with pytest.raises(ValueError, match="system_prompt"):
            await model.extract("Ada", Person, system_prompt=prompt)

    assert server.requests() == []
