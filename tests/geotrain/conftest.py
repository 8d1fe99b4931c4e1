"""Shared fixtures: one tiny model per family (session scope) and PA records written like the MTS pipeline's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")
PERCEPTION = "Diagram relations:\nline A B C\n\\odot O lieson A B\nAB = 12, BC = 5\n\n"
TRACES = (
    "Solution:\nGougu N0 N1 V0\nGet V0",
    "Solution:\ndef solve():\n    x = 12 * 5\n    return x / 2\nprint(solve())",
    "Solution:\nStep 1: the tangent is perpendicular to the radius. Sum N0 N1\nGet V0",
)


def pa_record(index: int, *, image: str | None = "images/d0.png") -> dict[str, Any]:
    """A PA record shaped exactly like geosynth.mts._pa.pa_record's output."""
    trace = TRACES[index % len(TRACES)]
    target = PERCEPTION + trace
    images = [image] if image else []
    user: list[dict[str, Any]] = [{"type": "image", "text": None} for _ in images]
    user.append(
        {"type": "text", "text": f"Find the length of AB ({index}).\nStart by writing down the relations."}
    )
    return {
        "id": f"p{index}:program", "problem_id": f"p{index}", "trace_type": "program", "images": images,
        "messages": [{"role": "user", "content": user}, {"role": "assistant", "content": [{"type": "text", "text": target}]}],
        "perception_span": [0, len(PERCEPTION)], "reasoning_span": [len(PERCEPTION), len(target)], "answer": "6.0",
    }  # fmt: skip


@pytest.fixture(scope="session")
def write_pa(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], Path]:
    """Write ``n`` PA records (with a 56x56 diagram) into a fresh folder; returns the JSONL path."""
    pytest.importorskip("PIL")
    from PIL import Image

    def write(n: int, *, images: bool = True) -> Path:
        folder = tmp_path_factory.mktemp("pa")
        (folder / "images").mkdir()
        for k in range(2):
            Image.new("RGB", (56, 56), (200 * k, 40, 90)).save(folder / "images" / f"d{k}.png")
        rows = [pa_record(i, image=(f"images/d{i % 2}.png" if images else None)) for i in range(n)]
        path = folder / "pa.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The tiny model folder of a family, built once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch

    torch.set_num_threads(1)
    import geotrain

    built: dict[str, Path] = {}

    def get(family: str) -> Path:
        if family not in built:
            built[family] = geotrain.build_tiny_model(family, tmp_path_factory.mktemp(family))  # type: ignore[arg-type]
        return built[family]

    return get


@pytest.fixture(scope="session")
def make_record() -> Callable[..., dict[str, Any]]:
    """:func:`pa_record` as a fixture (test modules cannot import conftest under importlib mode)."""
    return pa_record
