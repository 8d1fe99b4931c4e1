"""geoprm's data construction with its teacher (and completer) behind a real ``transformers serve``.

The tiny random teacher writes no critique the parser accepts, so every item is dropped as
``teacher_unreadable`` (counted, no crash, no record); the images of the items reach the vision
model; a completer that needs vLLM's ``continue_final_message`` fails with one line naming it.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from geoprm.data import MonteCarlo, PRMItem, build_prm_data, mc_hard_labels
from geotts import BackendError, LastNumberExtractor, SamplingParams
from geotts.testing import ScriptedSampler

from .conftest import Served, serve_skip_reason

pytestmark = [
    pytest.mark.slow,  # a server process and two model builds: about a minute on a loaded 2-core machine
    pytest.mark.skipif(serve_skip_reason() is not None, reason=serve_skip_reason() or ""),
]

SOLUTION = (
    "Step 1: The two legs are 3 and 4.\nStep 2: By the Pythagorean theorem the hypotenuse is 5.\nAnswer: 5"
)


def _items(tmp_path: Path) -> list[PRMItem]:
    from PIL import Image

    Image.new("RGB", (48, 48), (240, 240, 240)).save(tmp_path / "fig.png")
    return [
        PRMItem(id="with-figure", question="Find AB.", images=(str(tmp_path / "fig.png"),), solution=SOLUTION, answer=5.0),
        PRMItem(id="text-only", question="Find the hypotenuse.", solution=SOLUTION, answer=5.0),
    ]  # fmt: skip


def test_teacher_critiques_come_back_and_unreadable_ones_are_counted(served: Served, tmp_path: Path) -> None:
    from geotts.backends.openai import OpenAICompatibleSampler

    items = _items(tmp_path)
    completer = ScriptedSampler(lambda request: ["Answer: 5"] * 64)  # never asked: no critique is usable
    with OpenAICompatibleSampler(served.base_url, served.vision_model, max_retries=0, timeout=120) as teacher:
        result = build_prm_data(
            items,
            teacher=teacher,
            completer=completer,
            extractor=LastNumberExtractor(marker="Answer:"),
            rng=random.Random(0),
            teacher_params=SamplingParams(temperature=0.0, max_tokens=24),
        )
    assert result.records == ()
    assert result.stats.items == 2 and result.stats.judged == 0
    assert result.stats.dropped["teacher_unreadable"] == 2
    assert completer.calls == []


def test_a_completer_that_needs_vllm_extensions_fails_in_one_line(served: Served, tmp_path: Path) -> None:
    from geotts.backends.openai import OpenAICompatibleSampler

    item = _items(tmp_path)[1]
    settings = MonteCarlo(completions=2, params=SamplingParams(temperature=1.0, max_tokens=8, seed=0))
    with (
        OpenAICompatibleSampler(served.base_url, served.text_model, max_retries=0, timeout=120) as completer,
        pytest.raises(BackendError) as err,
    ):
        mc_hard_labels(
            [(item, item.solution_steps)], completer, LastNumberExtractor(marker="Answer:"), settings=settings
        )
    message = str(err.value)
    assert "HTTP 422" in message and "continue_final_message" in message and "\n" not in message
