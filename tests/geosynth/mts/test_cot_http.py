"""CoT-PAL and CoT-Program end to end against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("httpx")
pytest.importorskip("geotts")

import geodsl
from geosynth.mts import LLMConfig, MTSConfig, MTSLLMError, PromptName, PromptTemplate, run_mts, template

if TYPE_CHECKING:
    from .conftest import FakeOpenAI


def _questions(dataset: Path) -> dict[str, str]:
    records = json.loads(dataset.read_text())
    return {
        k: " ".join(records[k]["text"].split())
        for k in ("prob_13", "prob_27", "prob_159", "prob_494", "prob_738", "prob_1742")
    }


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start) + len(start)
    return text[i : text.index(end, i)]


_EQUATION = re.compile(r"^(eq\d+ = Eq\()", re.M)
_PRINT = re.compile(r'^print\(f"\{float\((\w+)\):\.3f\}"\)$', re.M)
_SOLVE = re.compile(r"^(\w+(?:, \w+)* = .*solve.*)$", re.M)


def _commented(script: str) -> str:
    return _EQUATION.sub("# By the theorem that fits this figure.\n\\1", script)


def _drifted(script: str) -> str:
    return _EQUATION.sub("\\1 1 + ", _commented(script), count=1)  # a changed equation


def _changed_print(script: str) -> str:
    return _PRINT.sub(r"print(round(float(\1), 1))", _commented(script))  # a changed print line


def _wrong_answer(script: str) -> str:
    """Keeps every key line but shifts the printed unknown: only the sandbox run can catch it."""
    assert _PRINT.search(script) is not None, script
    return _PRINT.sub(r"\1 = \1 + 1\n\g<0>", _commented(script))


def _raising(script: str) -> str:
    """Keeps every key line but raises after the first solve."""
    return _SOLVE.sub("\\1\nraise ValueError('lost the equations')", _commented(script), count=1)


# Per problem: what the model answers on pass 1, 2, 3 of CoT-PAL (None: a good commented script).
PLAN: dict[str, list[Callable[[str], str] | None]] = {
    "prob_27": [_drifted, None],
    "prob_159": [_wrong_answer, _changed_print, _wrong_answer],
    "prob_494": [lambda s: "I am not able to help with this.", _raising, None],
}


class Model:
    """The scripted teacher model: CoT-PAL rewrites, repairs and CoT-Program explanations."""

    def __init__(self, questions: dict[str, str]) -> None:
        self.questions = questions
        self.passes: Counter[str] = Counter()

    def problem(self, prompt: str) -> str:
        question = _between(prompt, "## Problem\n", "\n\n")
        return next((k for k, q in self.questions.items() if q == question), "other")

    def __call__(self, prompt: str) -> str:
        pid = self.problem(prompt)
        if "## Program\n`" in prompt:
            return self.cot_program(pid, _between(prompt, "## Program\n`", "`\n"))
        reference = _between(
            prompt,
            "## Reference PAL script\n```python\n"
            if "Reference PAL" in prompt
            else "## PAL script\n```python\n",
            "\n```",
        )
        self.passes[pid] += 1
        plan = PLAN.get(pid, [])
        k = self.passes[pid] - 1
        make = plan[k] if k < len(plan) else None
        return f"```python\n{(make or _commented)(reference)}\n```"

    def cot_program(self, pid: str, program: str) -> str:
        steps = geodsl.parse_instantiated(program).program.steps
        tokens = program.split()
        lines: list[str] = []
        at = 0
        for n, step in enumerate(steps, start=1):
            width = 1 + len(step.operands)
            text = " ".join(tokens[at : at + width])
            at += width
            if pid == "prob_27" and n == 1:
                text = text.replace(text.split()[1], "7", 1)  # a misquoted operand
            lines.append(
                f"{n}. **Step {n}.** The {step.op} relation holds in this figure.\n   **Op:** `{text}`"
            )
        return "\n".join(lines) + f"\nFinal program: {program if pid != 'prob_27' else 'omitted'}"


@pytest.fixture
def llm_run(
    tmp_path: Path, mini_dataset: Path, fake_openai: Callable[[Callable[[str], str]], FakeOpenAI]
) -> tuple[FakeOpenAI, Model, MTSConfig, Path]:
    model = Model(_questions(mini_dataset))
    server = fake_openai(model)
    config = MTSConfig(
        jobs=2,
        shard_size=4,
        mixtures=False,
        llm=LLMConfig(model="teacher", base_url=server.base_url, max_retries=0, timeout=30),
    )
    return server, model, config, tmp_path / "out"


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {r["problem_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_cot_stages_verify_repair_and_give_up_after_three_passes(
    llm_run: tuple[FakeOpenAI, Model, MTSConfig, Path], mini_dataset: Path
) -> None:
    server, _, config, out = llm_run
    run = run_mts(mini_dataset, out, config)
    assert not run.cot_skipped
    cot_pal = _rows(out / "traces" / "cot_pal.jsonl")
    assert {k: v["passes"] for k, v in cot_pal.items()} == {
        "prob_13": 1,
        "prob_27": 2,
        "prob_494": 3,
        "prob_738": 1,
        "prob_1742": 1,
    }
    assert "# By the theorem" in cot_pal["prob_27"]["text"]
    assert cot_pal["prob_13"]["answer"] == pytest.approx(25.0)
    drops = _rows(out / "drops.jsonl")
    assert drops["prob_159"]["reason"] == "cot_pal_failed"
    assert "3 passes" in drops["prob_159"]["detail"] and "printed" in drops["prob_159"]["detail"]
    assert drops["prob_27"]["reason"] == "cot_program_mismatch"
    assert "token 2" in drops["prob_27"]["detail"]
    cot_program = _rows(out / "traces" / "cot_program.jsonl")
    assert set(cot_program) == {
        "prob_13",
        "prob_159",
        "prob_494",
        "prob_738",
        "prob_1742",
        "syn_contradiction",
        "syn_mismatch",
    }
    assert "**Op:**" in cot_program["prob_13"]["text"]
    stats = run.stats
    assert stats.cot_pal_by_pass == {"1": 3, "2": 1, "3": 1}
    assert stats.cot_pal_failed == 1 and stats.cot_program_mismatched == 1
    assert stats.mts == 6 + 7 + 5 and stats.llm == "teacher"
    repairs = [p for p in server.prompts if "Reference PAL script" in p]
    assert any("equation line 1 changed" in p for p in repairs)  # the error is fed back
    assert any("print line 1 changed" in p for p in repairs)
    assert any("lost the equations" in p for p in repairs)
    assert all(" = Eq(" in _between(p, "## Reference PAL script\n```python\n", "\n```") for p in repairs)
    assert sum("## Program\n`" in p for p in server.prompts) == 8  # one CoT-Program call per usable problem


def test_a_rerun_costs_no_request(
    llm_run: tuple[FakeOpenAI, Model, MTSConfig, Path], mini_dataset: Path
) -> None:
    server, _, config, out = llm_run
    run_mts(mini_dataset, out, config)
    calls = server.calls
    first = (out / "traces" / "cot_pal.jsonl").read_bytes()
    again = run_mts(mini_dataset, out, config)
    assert server.calls == calls and sum(again.computed.values()) == 0
    shutil.rmtree(out / "work")  # even recomputing every stage is answered from the cache
    third = run_mts(mini_dataset, out, config)
    assert server.calls == calls and third.computed["cot_pal"] == 2
    assert (out / "traces" / "cot_pal.jsonl").read_bytes() == first


def test_a_dead_server_stops_the_run_and_keeps_finished_work(tmp_path: Path, mini_dataset: Path) -> None:
    config = MTSConfig(
        shard_size=4,
        mixtures=False,
        llm=LLMConfig(model="teacher", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=5),
    )
    with pytest.raises(MTSLLMError, match="teacher"):
        run_mts(mini_dataset, tmp_path / "out", config)
    assert len(list((tmp_path / "out" / "work" / "verify").glob("*.jsonl"))) == 1


class _Stop(Exception):
    pass


def test_an_interrupted_cot_stage_resumes_from_its_finished_shards(
    llm_run: tuple[FakeOpenAI, Model, MTSConfig, Path], mini_dataset: Path
) -> None:
    server, model, config, out = llm_run

    def stop(stage: str, index: int) -> None:
        if (stage, index) == ("cot_pal", 0):
            raise _Stop

    with pytest.raises(_Stop):
        run_mts(mini_dataset, out, config, after_shard=stop)
    calls = server.calls
    run = run_mts(mini_dataset, out, config)
    assert run.reused["cot_pal"] == 1 and run.computed["cot_pal"] == 1
    later_cot_pal = {model.problem(p) for p in server.prompts[calls:] if "```python" in p}
    assert later_cot_pal == {"prob_738", "prob_1742"}  # only the second shard's verified problems
    assert run.stats.cot_pal_by_pass == {"1": 3, "2": 1, "3": 1}


def test_a_new_prompt_version_recomputes_only_the_stage_that_uses_it(
    llm_run: tuple[FakeOpenAI, Model, MTSConfig, Path], mini_dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _, config, out = llm_run
    run_mts(mini_dataset, out, config)
    calls = server.calls
    current = template("cot_pal")
    bumped = PromptTemplate(name="cot_pal", version=current.version + 1, text="Be brief.\n" + current.text)

    def patched(name: PromptName) -> PromptTemplate:
        return bumped if name == "cot_pal" else template(name)

    monkeypatch.setattr("geosynth.mts._cot.template", patched)
    again = run_mts(mini_dataset, out, config)
    assert again.computed == {"prepare": 0, "verify": 0, "cot_pal": 2, "cot_program": 0}
    new_prompts = server.prompts[calls:]
    assert new_prompts and all(p.startswith("Be brief.") or "Reference PAL script" in p for p in new_prompts)
    manifest = json.loads((out / "manifest.json").read_text())
    assert bumped.fingerprint in manifest["prompts"]
