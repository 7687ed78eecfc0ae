"""A scriptable OpenAI-compatible HTTP server on 127.0.0.1, for testing the HTTP adapters.

The test queues replies per path (status, headers, body, and a delay before
answering); the server answers each request to that path with the next
reply and records every request it read. A request with nothing queued gets
a 599 and is recorded in `unexpected`, so a test that sends more requests
than it planned fails loudly. It speaks HTTP/1.1 with keep-alive, like a
real server, and counts the connections clients close.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

#: Seconds a handler waits for the next request on a kept-alive connection.
IDLE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Reply:
    """One queued answer: `body` is sent as JSON unless it is `bytes`."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    #: Seconds between one byte of the body and the next; 0 sends it at once.
    trickle: float = 0.0
    #: Answer only once the server stops: a reply no deadline can wait out.
    hold: bool = False


@dataclass(frozen=True)
class Request:
    """One request as the server read it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    def json(self) -> Any:
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = Request(
            method="POST",
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self.rfile.read(length),
            received_at=time.monotonic(),
        )
        reply = self.server.owner.take(request)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.hold:
            self.server.owner.stopping.wait()
        content = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if reply.trickle:
                for index in range(len(content)):
                    if self.server.owner.stopping.wait(reply.trickle):
                        break
                    self.wfile.write(content[index : index + 1])
                    self.wfile.flush()
            else:
                self.wfile.write(content)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first (a timeout test); there is nobody to answer.
            self.close_connection = True

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner.connection_closed()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: pytest shows the recorded requests when a test fails."""


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: FakeOpenAiServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up mid-request is not an error of the server's."""


class FakeOpenAiServer:
    """Answers `POST /v1/...` from per-path queues and records every request."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._replies: dict[str, deque[Reply]] = defaultdict(deque)
        self._requests: list[Request] = []
        self._unexpected: list[Request] = []
        self._closed_connections = 0
        #: Set when the server stops, releasing every held or trickling reply.
        self.stopping = threading.Event()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The API root, `/v1` included, as an adapter expects it."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def reply(self, path: str, *replies: Reply) -> None:
        """Queue `replies` for `path` (e.g. `/v1/embeddings`), answered in order."""
        with self._lock:
            self._replies[path].extend(replies)

    def requests(self, path: str | None = None) -> list[Request]:
        """Every request read so far, oldest first, optionally only those to `path`."""
        with self._lock:
            return [each for each in self._requests if path is None or each.path == path]

    @property
    def unexpected(self) -> list[Request]:
        """Requests that found no queued reply."""
        with self._lock:
            return list(self._unexpected)

    @property
    def closed_connections(self) -> int:
        """How many client connections have ended so far."""
        with self._lock:
            return self._closed_connections

    def take(self, request: Request) -> Reply:
        with self._lock:
            self._requests.append(request)
            queue = self._replies[request.path]
            if queue:
                return queue.popleft()
            self._unexpected.append(request)
            return Reply(status=599, body={"error": f"no reply queued for {request.path}"})

    def connection_closed(self) -> None:
        with self._lock:
            self._closed_connections += 1
            self._lock.notify_all()

    def wait_for_closed_connections(self, count: int, *, timeout: float) -> bool:
        """Block until `count` connections have ended; `False` if `timeout` seconds pass first."""
        with self._lock:
            return self._lock.wait_for(lambda: self._closed_connections >= count, timeout)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, then wait for every handler thread to finish."""
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
