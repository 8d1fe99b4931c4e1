"""Packaging contracts of geotts: the public surface, light imports, extras, and a standalone install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import geotts

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "packages" / "geotts"

PUBLIC = [
    "Aggregation",
    "AnswerExtractor",
    "AnswerKey",
    "BackendError",
    "BeamParams",
    "BestOfNDecision",
    "CGMTEConfig",
    "ChatMessage",
    "Completion",
    "ConsensusEnsemble",
    "DEFAULT_ORDER",
    "Decision",
    "GenerationRequest",
    "GeoTTSError",
    "LastNumberExtractor",
    "MTEConfig",
    "MissingExtraError",
    "MultiTraceEnsemble",
    "Problem",
    "RefinedBestOfN",
    "RefinedBestOfNConfig",
    "Sampler",
    "SamplingParams",
    "SelfConsistency",
    "SelfConsistencyConfig",
    "SplitSolution",
    "SplitStyle",
    "StepJudgement",
    "StepScoreRequest",
    "StepScorer",
    "Strategy",
    "StrategyConfigError",
    "TRACE_INSTRUCTIONS",
    "UNSCORED",
    "adaptive_beam_sc",
    "cg_mte",
    "format_steps",
    "judge_solutions",
    "mte",
    "numeric_key",
    "refined_prefix",
    "run_strategy",
    "select_solution",
    "self_consistency",
    "split_steps",
    "strategy_from_spec",
    "strip_step_label",
]


def test_public_surface_matches_the_snapshot() -> None:
    assert sorted(geotts.__all__) == sorted(PUBLIC)
    assert all(hasattr(geotts, name) for name in PUBLIC)


def test_boundary_models_are_frozen_and_strict() -> None:
    for name in [
        "BeamParams",
        "ChatMessage",
        "Completion",
        "Decision",
        "GenerationRequest",
        "Problem",
        "SamplingParams",
        "SplitSolution",
        "StepJudgement",
        "StepScoreRequest",
        "CGMTEConfig",
        "MTEConfig",
        "SelfConsistencyConfig",
        "RefinedBestOfNConfig",
    ]:
        config = getattr(geotts, name).model_config
        assert (config.get("frozen"), config.get("extra"), config.get("strict")) == (True, "forbid", True), (
            name
        )


def test_import_is_light_and_backends_are_lazy() -> None:
    code = (
        "import sys, geotts, geotts.testing, geotts.backends; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch','transformers','httpx','vllm','matplotlib'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


def test_a_missing_extra_names_the_install_command() -> None:
    from geotts.backends._common import require

    with pytest.raises(geotts.MissingExtraError, match=r'pip install "geotts\[vllm\]"'):
        require("geotts_module_that_does_not_exist", "vllm")


@pytest.mark.network
def test_installs_alone_with_only_pydantic_and_the_functional_api_works(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"}}
    venv = tmp_path / "venv"
    subprocess.run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=env, timeout=300
    )
    py = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(py), str(PACKAGE)], check=True, env=env, timeout=600
    )
    listed = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.metadata as m, json; print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    installed = set(json.loads(listed.stdout))
    assert "geotts" in installed and "pydantic" in installed
    assert not installed & {
        "torch",
        "transformers",
        "vllm",
        "sympy",
        "httpx",
        "matplotlib",
        "numpy",
        "geodsl",
        "geoprm",
        "geosynth",
        "geotrain",
        "geo-cli",
    }
    script = (
        "import geotts\n"
        "d = geotts.cg_mte({'program': [3.0, 4.0], 'pal': [3.0004, None], 'cot_program': [5.0, 3.0], 'cot_pal': [2.0, 3.0]})\n"
        "s = geotts.self_consistency([1, 2, 2])\n"
        "m = geotts.mte({'program': [1, 2], 'pal': [2, 2]})\n"
        "print(d.answer, d.depth, d.samples, s.answer, m.answer)\n"
        "from geotts.backends.openai import OpenAICompatibleSampler\n"
        "try:\n"
        "    OpenAICompatibleSampler('http://127.0.0.1:1/v1', 'm')\n"
        "except geotts.MissingExtraError as exc:\n"
        "    print('missing:', exc)\n"
    )
    out = subprocess.run([str(py), "-c", script], capture_output=True, text=True, check=True, timeout=120)
    first, second = out.stdout.strip().splitlines()
    assert first.split() == ["3.0", "1", "4", "2", "2"]
    assert second == 'missing: httpx is not installed; install it with: pip install "geotts[openai]"'
