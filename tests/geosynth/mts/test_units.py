"""The pieces of the MTS pipeline: reply parsing, prompts, mixtures, configuration, the LLM cache."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import geodsl
from geosynth.mts import (
    MIXTURE_NAMES,
    PA_INSTRUCTIONS,
    PROMPT_VERSIONS,
    TRACE_TYPES,
    LLMConfig,
    MTSConfigError,
    TraceType,
    build_mixtures,
    equation_drift,
    extract_code,
    extract_steps,
    load_llm_config,
    program_mismatch,
    rationale_missing,
    record_tokens,
    template,
)
from geosynth.mts._prompts import format_operators

PAL = geodsl.to_pal("Gougu N0 N1 x Get x", ["3", "4"])


# --- reply parsing -------------------------------------------------------------------------------


def test_extract_code_takes_the_fenced_script() -> None:
    reply = f"Here it is:\n```python\n{PAL}```\nDone. ```text\nnot code\n```"
    assert extract_code(reply) == PAL
    assert extract_code(PAL) == PAL  # a bare script is taken whole
    assert extract_code("   \n") is None
    assert extract_code("```python\nprint(1)") == "print(1)\n"  # an unterminated fence still counts


#: A joint solve: two equations, one ``solve(..., dict=True)`` and the assignments from its solution.
JOINT = geodsl.to_pal("Sum x y N0 Multiple N1 x y Get y", ["180", "2"])


def _comment_equations(script: str, text: str = "The angles of a linear pair add up to 180 degrees.") -> str:
    return re.sub(r"^(# step \d+:)", f"# {text}\n\\1", script, flags=re.M)


def test_equation_drift_allows_added_comments_and_blank_lines() -> None:
    for script in (PAL, JOINT):
        commented = _comment_equations(script)
        assert commented != script and equation_drift(script, commented) is None
        spaced = commented.replace("\neq", "\n\n# so:\neq").replace("Eq(x + y, 180)", "Eq(x+y,  180)")
        trailing = re.sub(r"^(print\(.*)$", r'\1  # the "answer", to three decimals', spaced, flags=re.M)
        assert trailing.count("\n") > script.count("\n") and equation_drift(script, trailing) is None


#: Edits of a commented JOINT script, each breaking one key line, and what the drift check must say.
KEY_LINE_EDITS: list[tuple[Callable[[str], str], str]] = [
    (
        lambda s: s.replace("eq1 = Eq(x + y, 180)", "eq1 = Eq(x + y, 190)"),
        "equation line 1 changed: expected 'eq1 = Eq(x + y, 180)', got 'eq1 = Eq(x + y, 190)'",
    ),
    (lambda s: s.replace("eq2 = Eq(2 * x, y)", "eq2 = Eq(2 * x, y + 1)"), "equation line 2 changed"),
    (lambda s: s.replace("[0]\n", "[-1]\n"), "solve line 1 changed"),
    (
        lambda s: s.replace("x, y = solution[x], solution[y]", "x, y = solution[y], solution[x]"),
        "solve line 2 changed",
    ),
    (lambda s: s.replace('print(f"{float(y):.3f}")', "print(float(y) + 1)"), "print line 1 changed"),
    (lambda s: s.replace("eq2 = Eq(2 * x, y)\n", ""), "equation line 2 was removed: 'eq2 = Eq(2 * x, y)'"),
    (lambda s: s.replace("x, y = solution[x], solution[y]\n", ""), "solve line 2 was removed"),
    (lambda s: s.replace('print(f"{float(y):.3f}")\n', ""), "print line 1 was removed"),
    (
        lambda s: s.replace("\nprint(", "\ny = solve(eq1, y)[0]\nprint("),
        "adds a solve line 'y = solve(eq1, y)[0]'",
    ),
    (
        lambda s: s.replace("eq1 = Eq(x + y, 180)\n", "").replace(
            "eq2 = Eq(2 * x, y)\n", "eq2 = Eq(2 * x, y)\neq1 = Eq(x + y, 180)\n"
        ),
        "the key lines are reordered: equation line 1 should be 'eq1 = Eq(x + y, 180)'",
    ),
]


@pytest.mark.parametrize(("edit", "problem"), KEY_LINE_EDITS)
def test_equation_drift_catches_every_changed_key_line(edit: Callable[[str], str], problem: str) -> None:
    candidate = edit(_comment_equations(JOINT))
    assert candidate != _comment_equations(JOINT)
    assert problem in (equation_drift(JOINT, candidate) or "")


def test_equation_drift_reads_single_unknown_solves() -> None:
    commented = _comment_equations(PAL, "The legs squared add up to the hypotenuse squared.")
    assert equation_drift(PAL, commented) is None
    assert "solve line 1 changed" in (
        equation_drift(PAL, commented.replace("pick(solve(eq1, x))", "solve(eq1, x)[0]")) or ""
    )
    assert "equation line 1 changed" in (equation_drift(PAL, commented.replace("4**2", "5**2")) or "")


def test_a_rewrite_without_rationales_is_not_a_cot_pal_trace() -> None:
    assert "no rationale" in (rationale_missing(PAL) or "")  # the translator's own step comments do not count
    assert (
        rationale_missing(_comment_equations(PAL, "The legs squared add up to the hypotenuse squared."))
        is None
    )


def test_scripts_with_more_equations_and_trigonometry_run_first() -> None:
    from geosynth.mts._runner import _expected_cost

    trig = geodsl.to_pal("Gsin N0 N1 N2 Get y", ["24", "y", "30"])
    assert _expected_cost(PAL) == 1 and _expected_cost(JOINT) == 2
    assert _expected_cost(trig) == 3  # one equation, with a sine


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (
            "1. **A**\n**Op:** `Gougu 3 4 x`\n2. **B**\n**Op:** `Get x`\nFinal program: Gougu 3 4 x Get x",
            None,
        ),
        ("1. A. Op: Gougu 3 4 x\n2. B. Op: Get x", None),
        ("1. A. Op: Gougu 4 3 x\n2. B. Op: Get x", "token 2: expected '3', got '4'"),
        (
            "1. A. Op: Gougu 3 4 x\n2. B. Op: Get x\nFinal program: Gougu 3 4 x",
            "final program line have 4 tokens",
        ),
        ("1. A. Op: Gougu 3 4 x", "have 4 tokens, the program 6"),
        ("The answer is 5.", "no 'Op:' lines"),
    ],
)
def test_program_mismatch_checks_every_token(reply: str, problem: str | None) -> None:
    why = program_mismatch("Gougu 3 4 x Get x", reply)
    assert why is None if problem is None else problem in (why or "")


def test_extract_steps_reads_latex_values() -> None:
    steps, final = extract_steps("1. **Op:** `Geo_Mean 3\\sqrt{2} z \\sqrt{2}`\nFinal program is: Get y")
    assert steps == ["Geo_Mean", "3\\sqrt{2}", "z", "\\sqrt{2}"] and final == ["Get", "y"]


# --- prompts -------------------------------------------------------------------------------------


def test_prompts_are_versioned_package_data_with_the_expected_fields() -> None:
    fields = {name: template(name).fields for name in PROMPT_VERSIONS}
    assert fields == {
        "cot_pal": {"question", "clauses", "pal"},
        "cot_pal_repair": {"question", "answer", "error", "pal", "script"},
        "cot_program": {"question", "clauses", "operators", "program"},
    }
    assert template("cot_pal").fingerprint.startswith("cot_pal.v2:")


def test_rendering_keeps_latex_braces_and_rejects_missing_fields() -> None:
    text = template("cot_program").render(
        {
            "question": "Find \\angle{ABC}.",
            "clauses": "- AB = {x}",
            "operators": format_operators(["Gougu", "Get"]),
            "program": "Gougu 3 4 x Get x",
        }
    )
    assert "Find \\angle{ABC}." in text and "- AB = {x}" in text and "`Gougu 3 4 x Get x`" in text
    assert "Pythagorean theorem" in text  # the operator's meaning from geodsl's registry
    assert "`Sum`" not in text  # only the operators the program uses
    with pytest.raises(MTSConfigError, match="missing fields"):
        template("cot_pal").render({"question": "q"})


def test_four_distinct_trace_instructions() -> None:
    assert set(PA_INSTRUCTIONS) == set(TRACE_TYPES)
    assert len(set(PA_INSTRUCTIONS.values())) == 4


# --- mixtures ------------------------------------------------------------------------------------


def _record(kind: str, k: int, words: int) -> dict[str, Any]:
    return {
        "id": f"p{k}:{kind}",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "question"}]},
            {"role": "assistant", "content": [{"type": "text", "text": " ".join(["w"] * words)}]},
        ],
    }


def test_leave_one_out_mixtures_are_resampled_to_the_full_token_budget() -> None:
    sizes = {"program": 5, "pal": 40, "cot_program": 20, "cot_pal": 60}
    records: dict[TraceType, list[dict[str, Any]]] = {
        t: [_record(t, k, sizes[t]) for k in range(10)] for t in TRACE_TYPES
    }
    mixes = build_mixtures(records, seed=3)
    assert list(mixes) == list(MIXTURE_NAMES)
    budget = sum(record_tokens(r) for r in mixes["mts_all"])
    assert budget == 10 * (5 + 40 + 20 + 60)
    for t in TRACE_TYPES:
        mix = mixes[f"wo_{t}"]
        tokens = sum(record_tokens(r) for r in mix)
        assert budget <= tokens < budget + 60
        assert all(not r["id"].endswith(f":{t}") for r in mix)
    assert len(mixes["program_size_matched"]) == 40
    assert {r["id"] for r in mixes["program_size_matched"]} == {f"p{k}:program" for k in range(10)}
    assert build_mixtures(records, seed=3) == mixes
    assert build_mixtures(records, seed=4)["wo_pal"] != mixes["wo_pal"]


# --- configuration -------------------------------------------------------------------------------


def test_llm_config_files(tmp_path: Path) -> None:
    good = tmp_path / "llm.yaml"
    good.write_text("model: qwen\nbase_url: http://127.0.0.1:8000/v1\ntemperature: 0.2\n")
    assert load_llm_config(good) == LLMConfig(
        model="qwen", base_url="http://127.0.0.1:8000/v1", temperature=0.2
    )
    (tmp_path / "a.json").write_text(json.dumps({"model": "m"}))
    with pytest.raises(MTSConfigError, match="base_url"):
        load_llm_config(tmp_path / "a.json")
    (tmp_path / "b.json").write_text(json.dumps({"model": "m", "base_url": "u", "temprature": 1}))
    with pytest.raises(MTSConfigError, match="temprature"):
        load_llm_config(tmp_path / "b.json")
    (tmp_path / "c.json").write_text("[1]")
    with pytest.raises(MTSConfigError, match="mapping"):
        load_llm_config(tmp_path / "c.json")
    with pytest.raises(MTSConfigError, match="cannot read"):
        load_llm_config(tmp_path / "missing.json")


# --- the LLM cache and rate limit ----------------------------------------------------------------


def test_cached_llm_sends_each_prompt_once_and_spaces_batches(tmp_path: Path) -> None:
    testing = pytest.importorskip("geotts.testing")
    from geosynth.mts._llm import CachedLLM

    def script(req: Any) -> list[str]:
        return [f"reply to {req.messages[-1].content}"] * 10

    sampler = testing.ScriptedSampler(script)
    clock = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock[0] += seconds

    config = LLMConfig(model="m", base_url="u", batch_size=2, requests_per_minute=60)
    llm = CachedLLM(sampler, config, tmp_path / "cache.sqlite", clock=lambda: clock[0], sleep=sleep)
    assert llm.complete(["a", "b", "a", "c"]) == ["reply to a", "reply to b", "reply to a", "reply to c"]
    assert llm.requests_sent == 3 and sleeps == [2.0]  # 2 requests at 60/min, then wait 2 s for the next
    llm.close()
    again = CachedLLM(sampler, config, tmp_path / "cache.sqlite")
    assert again.complete(["c", "a"]) == ["reply to c", "reply to a"]
    assert again.requests_sent == 0 and again.cache_hits == 2
    other = CachedLLM(sampler, config.model_copy(update={"temperature": 0.7}), tmp_path / "cache.sqlite")
    other.complete(["a"])
    assert other.requests_sent == 1  # different parameters, different key
