"""A fake OpenAI-compatible server for tests: stdlib ``http.server`` on 127.0.0.1, a free port.

It serves ``POST /v1/chat/completions`` from a thread, the way the real ``openai`` client
expects, so the ``openai`` backend is tested through the real client::

    with FakeOpenAI() as server:                       # answers every task validly
        server.push(Reply(status=429, headers={"retry-after-ms": "10"}))   # then scripted replies first
        llm = OpenAILLM(base_url=server.url, model="any")

Each request takes the next scripted ``Reply`` if any is queued, else the ``answer``
function's text (default ``valid_answer``: a valid answer to whichever task was asked, a
deterministic function of the prompt). A request whose ``response_format`` type is not in
``formats`` gets HTTP ``reject_status`` ("response_format type ... is not supported"):
400 as from a server that lacks it, or 500 as llama-cpp-python answers json_schema::

    FakeOpenAI(formats=("json_object",), reject_status=500)   # like a llama-cpp-python server

``requests`` holds every request's lower-cased headers and JSON body, ``response_formats``
the ``response_format`` each request carried (None: none). Token usage is ``len(text) // 4 + 1`` for the
prompt (all messages) and for the answer.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from .tasks import REGISTRY


@dataclass
class Reply:
    """One scripted reply: an HTTP status (with an error body unless 200), the assistant's
    ``content`` (None = the server's ``answer``), a ``delay`` before answering, headers;
    ``raw``: send these bytes as the whole body instead (as ``content_type``), e.g. a
    proxy's HTML page or a truncated JSON body under HTTP 200."""

    status: int = 200
    content: str | None = None
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json"


def task_of(body: dict) -> str:
    """The task a request asks: the json_schema name, else the task whose prompt's answer
    line (``Task.answer_lines``) the user message holds ("unknown" if none does)."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return rf["json_schema"]["name"]
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return next((t.name for t in REGISTRY.values() if any(line in prompt for line in t.answer_lines())), "unknown")


def valid_answer(body: dict) -> str:
    """A valid JSON answer to the request's task (its ``fake``), a deterministic function of its prompt."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    task = REGISTRY.get(task_of(body))
    if task is None:
        raise ValueError(f"valid_answer: cannot tell which task this prompt asks: {prompt[:80]!r}")
    return json.dumps(task.fake(zlib.crc32(prompt.encode("utf-8"))))


def extracting_answer(body: dict) -> str:
    """``valid_answer``, but ``summarize`` states one fact per turn it is shown (all under one key,
    ``user.subject``, the value the turn's first 20 characters, naming the turn) and
    ``judge_relation`` says every pair contradicts: an extractor for tests of what memory does
    with a model's facts (``llm=routed``'s ``extract``)."""
    task = task_of(body)
    if task == "summarize":
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        turns = [line.split("] ", 1)[1] for line in prompt.splitlines() if line[:1].isdigit() and ". [" in line]
        facts = [{"key": "user.subject", "value": text[:20], "text": text, "belief": 0.8, "turns": [n]}
                 for n, text in enumerate(turns, 1)]
        return json.dumps({"summary": "s", "facts": facts, "events": []})
    if task == "judge_relation":
        return json.dumps({"label": "contradicts", "strength": 1.0})
    return valid_answer(body)


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


class FakeOpenAI:
    """The fake server (see the module docstring); a context manager that starts and stops it."""

    def __init__(self, answer: Callable[[dict], str] = valid_answer,
                 formats: tuple[str, ...] = ("json_schema", "json_object"), reject_status: int = 400):
        self.answer = answer
        self.formats = set(formats)
        self.reject_status = reject_status
        self.script: deque[Reply] = deque()
        self.requests: list[tuple[dict, dict]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def response_formats(self) -> list[dict | None]:
        """The ``response_format`` of every request received, in order (None: it sent none)."""
        with self._lock:
            return [body.get("response_format") for _, body in self.requests]

    def push(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> "FakeOpenAI":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _respond(self, headers: dict, body: dict) -> tuple[int, dict | Reply, dict, float]:
        """(status, JSON body — or the ``Reply`` itself when it sends ``raw`` bytes —, extra
        headers, delay) for one request."""
        with self._lock:
            self.requests.append((headers, body))
            reply = self.script.popleft() if self.script else None
        rf = (body.get("response_format") or {}).get("type")
        if reply is None and rf is not None and rf not in self.formats:
            reply = Reply(status=self.reject_status, content=f"response_format type {rf} is not supported")
        reply = reply or Reply()
        if reply.raw is not None:
            return reply.status, reply, reply.headers, reply.delay
        if reply.status != 200:
            error = {"message": reply.content or f"fake error {reply.status}", "type": "fake_error", "code": None}
            return reply.status, {"error": error}, reply.headers, reply.delay
        content = reply.content if reply.content is not None else self.answer(body)
        prompt_tokens = sum(_tokens(m["content"]) for m in body["messages"])
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": _tokens(content),
                      "total_tokens": prompt_tokens + _tokens(content)},
        }, reply.headers, reply.delay

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                status, payload, headers, delay = fake._respond(
                    {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
                time.sleep(delay)
                self._send(status, payload, headers)

            def _send(self, status, payload, headers):
                raw = isinstance(payload, Reply)
                data = payload.raw if raw else json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("content-type", payload.content_type if raw else "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args):
                pass

        return Handler

