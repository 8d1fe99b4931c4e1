"""Fixtures of the MTS tests: the mini dataset and a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def mini_dataset() -> Path:
    """Six PGPS9K test problems plus six broken or contradictory records (see data/README.md)."""
    return DATA / "mini_pgps.json"


@dataclass
class FakeOpenAI:
    """A chat-completions server whose replies come from ``reply(prompt_text)``; records every prompt."""

    reply: Callable[[str], str]
    prompts: list[str] = field(default_factory=list[str])
    lock: threading.Lock = field(default_factory=threading.Lock)
    base_url: str = ""

    @property
    def calls(self) -> int:
        return len(self.prompts)


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": "not found"})
                return
            content = body["messages"][-1]["content"]
            text = (
                content
                if isinstance(content, str)
                else "".join(p.get("text", "") for p in content if p.get("type") == "text")
            )
            with fake.lock:
                fake.prompts.append(text)
            answer = fake.reply(text)
            self._send(
                200,
                {
                    "id": "x",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {
                            "index": i,
                            "message": {"role": "assistant", "content": answer},
                            "finish_reason": "stop",
                        }
                        for i in range(body["n"])
                    ],
                    "usage": {"completion_tokens": len(answer.split())},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[Callable[[Callable[[str], str]], FakeOpenAI]]:
    """Start servers on free ports of 127.0.0.1 (``fake_openai(reply)``); all stop after the test."""
    servers: list[ThreadingHTTPServer] = []

    def start(reply: Callable[[str], str]) -> FakeOpenAI:
        fake = FakeOpenAI(reply=reply)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return fake

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
