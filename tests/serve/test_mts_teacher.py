"""The MTS teacher (geosynth.mts CoT stages) through a real ``transformers serve``.

The tiny random teacher writes gibberish, so no CoT trace survives: what is checked is that the run
finishes, keeps the program and PAL traces, drops every CoT instance with a one-line reason, and that
a vision teacher's prompts carry the diagrams and a text-only teacher's do not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Served, serve_skip_reason

pytestmark = [
    pytest.mark.slow,  # a server process and two model builds: about a minute on a loaded 2-core machine
    pytest.mark.skipif(serve_skip_reason() is not None, reason=serve_skip_reason() or ""),
]

DATA = Path(__file__).parents[1] / "geosynth" / "mts" / "data" / "mini_pgps.json"


def _dataset(tmp_path: Path) -> Path:
    """The six real PGPS9K problems of the MTS test data (the broken records are tested elsewhere)."""
    records = json.loads(DATA.read_text(encoding="utf-8"))
    path = tmp_path / "six.json"
    path.write_text(json.dumps({k: r for k, r in records.items() if k.startswith("prob_")}), encoding="utf-8")
    return path


def _diagrams(tmp_path: Path, dataset: Path) -> Path:
    from PIL import Image

    folder = tmp_path / "Diagram"
    folder.mkdir()
    for record in json.loads(dataset.read_text(encoding="utf-8")).values():
        Image.new("RGB", (60, 40), (255, 255, 255)).save(folder / record["diagram"])
    return folder


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("vision", [True, False], ids=["vision-teacher", "text-only-teacher"])
def test_the_cot_stages_run_through_the_server(served: Served, tmp_path: Path, vision: bool) -> None:
    from geosynth.mts import LLMConfig, MTSConfig, run_mts

    dataset = _dataset(tmp_path)
    llm = LLMConfig(
        model=served.vision_model if vision else served.text_model,
        base_url=served.base_url,
        max_tokens=16,
        max_retries=0,
        timeout=120,
        vision=vision,
    )
    config = MTSConfig(
        jobs=1,
        shard_size=6,
        mixtures=False,
        max_cot_pal_passes=1,
        images_dir=_diagrams(tmp_path, dataset),
        llm=llm,
    )
    run = run_mts(dataset, tmp_path / "out", config)
    out = tmp_path / "out"
    assert not run.cot_skipped
    assert len(_rows(out / "traces" / "program.jsonl")) == 6 and len(_rows(out / "traces" / "pal.jsonl")) == 6
    drops = {(d["problem_id"], d["reason"]): d for d in _rows(out / "drops.jsonl")}
    for pid in json.loads(dataset.read_text(encoding="utf-8")):
        for reason in ("cot_pal_failed", "cot_program_mismatch"):
            detail = drops[(pid, reason)]["detail"]
            assert detail and "\n" not in detail
    timings = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    assert timings["llm_requests_sent"] == 12  # one CoT-PAL pass and one CoT-Program call per problem
    assert timings["llm_requests_with_diagram"] == (12 if vision else 0)
    again = run_mts(dataset, out, config)  # every reply is cached: a rerun sends nothing
    assert again.computed["cot_pal"] == 0 and again.reused["cot_pal"] == 1
