"""Data construction end to end: a real local HTTP teacher and a real tiny transformers completer."""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("httpx")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from geoprm import Critique, StepCritique, format_critique, parse_critique  # noqa: E402
from geoprm.data import MonteCarlo, PRMItem, SFTRecord, build_prm_data, write_records  # noqa: E402
from geotts import LastNumberExtractor, SamplingParams, numeric_key  # noqa: E402
from geotts.backends.openai import OpenAICompatibleSampler  # noqa: E402
from geotts.backends.transformers import TransformersSampler  # noqa: E402
from geotts.testing import tiny_qwen_vl  # noqa: E402

torch.set_num_threads(1)


def _review(steps: list[str]) -> str:
    """The teacher's rule: a step that says "slip" is wrong."""
    parts: list[StepCritique] = []
    for index, step in enumerate(steps, start=1):
        wrong = "slip" in step
        parts.append(
            StepCritique(
                index=index,
                intent=f"Carry out step {index}.",
                image_analysis="No figure facts are used.",
                image_judgement="Correct",
                logic_analysis="The sum is off." if wrong else "The arithmetic holds.",
                logic_judgement="Incorrect" if wrong else "Correct",
                judgement="Incorrect" if wrong else "Correct",
            )
        )
        if wrong:
            break
    error = parts[-1].judgement == "Incorrect"
    return format_critique(Critique(steps=tuple(parts), correction="Redo the sum." if error else None))


class _Teacher(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Teacher.calls.append(body)
        content = body["messages"][-1]["content"]
        text = "".join(p.get("text", "") for p in content) if isinstance(content, list) else content
        steps = re.findall(r"^Step \d+: (.*)$", text.split("Solution steps:")[1], flags=re.MULTILINE)
        reply = {
            "id": "t",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": _review(steps)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"completion_tokens": 100},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def teacher_url() -> Iterator[str]:
    _Teacher.calls.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Teacher)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _items() -> list[PRMItem]:
    items = []
    for k in range(24):
        a, b = k + 2, 2 * k + 1
        steps = [f"Write {a} + {b}.", f"It is {a + b}."]
        if k % 3 == 1:
            steps[0] = f"Write {a} + {b + 1}, a slip."
        elif k % 3 == 2:
            steps[1] = f"It is {a + b + 1}, a slip."
        solution = "\n".join(f"Step {i}: {s}" for i, s in enumerate(steps, start=1)) + "\nAnswer: 0"
        items.append(
            PRMItem(id=f"p{k}", question=f"Compute {a} + {b}.", solution=solution, answer=float(a + b))
        )
    return items


@pytest.mark.slow
def test_data_pipeline_runs_against_an_http_teacher_and_a_tiny_completer(
    teacher_url: str, tmp_path: Path
) -> None:
    completer = TransformersSampler.from_pretrained(tiny_qwen_vl(tmp_path / "tiny"))
    items = _items()
    with OpenAICompatibleSampler(teacher_url, "teacher", logprobs=False, max_retries=0) as teacher:
        result = build_prm_data(
            items,
            teacher=teacher,
            completer=completer,
            extractor=LastNumberExtractor(marker="Answer:"),
            rng=random.Random(0),
            monte_carlo=MonteCarlo(
                completions=2, params=SamplingParams(temperature=1.0, max_tokens=6, seed=0)
            ),
            key=numeric_key,
            balanced=False,  # no solution without an error survives here, so balancing would keep none
        )
    stats = result.stats
    assert len(_Teacher.calls) == 24 and stats.judged == 24
    # the untrained completer never writes "Answer: <sum>", so every completed step is labelled wrong:
    # teacher and Monte Carlo agree exactly on the solutions whose first step is a slip
    assert stats.agreed == 8 and stats.dropped["disagree"] == 16
    # 8 judged at one step, 16 at two, m = 2
    assert stats.completions == (8 * 1 + 16 * 2) * 2
    assert (stats.with_error, stats.without_error, stats.dropped["balance"]) == (8, 0, 0)
    assert len(result.records) == 8
    path = write_records(result.records, tmp_path / "prm.jsonl")
    records = [SFTRecord.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert records == list(result.records)
    for record in records:
        assert parse_critique(record.completion).first_error == 1
