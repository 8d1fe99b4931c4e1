"""The template teacher: all four trace types offline, verified like LLM traces, varied and repeatable."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

import geodsl
from geo_cli.main import app
from geodsl.answers import answers_match
from geodsl.sandbox import Sandbox
from geodsl.traces import detect_format, extract_program, extract_script
from geosynth.mts import (
    TEMPLATE_TEACHER_MODEL,
    LLMConfig,
    MTSConfig,
    SourceProblem,
    TemplateTeacher,
    compute_stats,
    equation_drift,
    format_trace_table,
    load_dataset,
    load_llm_config,
    run_mts,
)
from geosynth.mts._cot import _first_prompt, _program_prompt
from geosynth.mts._template_phrases import FACTS
from geotts import ChatMessage, Completion, GenerationRequest, SamplingParams
from geotts.errors import BackendError
from geotts.testing import FunctionSampler

SAMPLE = Path(geodsl.__file__).parent / "samples" / "pgps9k_test_sample.json"
MINI = Path(__file__).parent / "data" / "mini_pgps.json"
TEMPLATE = LLMConfig.model_validate({"backend": "template"})


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _by_id(out: Path, trace_type: str) -> dict[str, dict[str, Any]]:
    return {r["problem_id"]: r for r in _rows(out / "traces" / f"{trace_type}.jsonl")}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MTS on the 120 PGPS9K test records that ship with geodsl, CoT traces by the template teacher."""
    out = tmp_path_factory.mktemp("template") / "out"
    run = run_mts(SAMPLE, out, MTSConfig(jobs=2, llm=TEMPLATE, mixtures=False))
    assert not run.cot_skipped
    return out


@pytest.fixture(scope="module")
def problems() -> dict[str, SourceProblem]:
    return {p.id: p for p in load_dataset(SAMPLE).problems}


def test_every_sample_record_gets_all_four_trace_types(sample_run: Path) -> None:
    stats = compute_stats(sample_run)
    programs, pals = _by_id(sample_run, "program"), _by_id(sample_run, "pal")
    assert len(pals) >= 0.95 * stats.records
    assert set(_by_id(sample_run, "cot_pal")) == set(pals)  # every verified PAL script got its CoT-PAL
    assert set(_by_id(sample_run, "cot_program")) == set(programs)
    assert stats.cot_pal_failed == 0 and stats.cot_program_mismatched == 0
    assert stats.llm == TEMPLATE_TEACHER_MODEL
    assert stats.mts_all == sum(stats.traces.values())
    manifest = json.loads((sample_run / "manifest.json").read_text())
    assert manifest["cot_traces"] == "produced" and manifest["llm"] == TEMPLATE_TEACHER_MODEL


def test_every_kept_cot_trace_verifies_when_checked_again(
    sample_run: Path, problems: dict[str, SourceProblem]
) -> None:
    pals = _by_id(sample_run, "pal")
    cot_pals = _by_id(sample_run, "cot_pal")
    scripts: list[tuple[str, str]] = []
    for pid, row in cot_pals.items():
        text = row["text"]
        assert detect_format(text) == "cot_pal", pid
        script = extract_script(text)
        assert script is not None and equation_drift(pals[pid]["text"], script) is None, pid
        scripts.append((pid, script))
    with Sandbox(workers=2) as box:
        results = box.run([s for _, s in scripts])
    for (pid, _), result in zip(scripts, results, strict=True):
        assert result.error is None and result.answer is not None, (pid, result.error)
        assert answers_match(result.answer, problems[pid].answer_value, rel_tol=1e-3), pid
    for pid, row in _by_id(sample_run, "cot_program").items():
        text = row["text"]
        assert detect_format(text) == "cot_program", pid
        program = extract_program(text)
        assert program is not None and program == problems[pid].program, pid
        assert answers_match(geodsl.execute_instantiated(program).answer, problems[pid].answer_value), pid


def test_rationales_vary_across_records_and_name_the_diagram(sample_run: Path) -> None:
    titles: dict[str, set[str]] = defaultdict(set)
    for row in _by_id(sample_run, "cot_program").values():
        for title, op in re.findall(r"\*\*(.+?)\.\*\*.*?\n\s+\*\*Op:\*\* `(\w+)", row["text"]):
            titles[op].add(re.sub(r"(: find | for ).*", "", title))
    assert len(titles["Sum"]) >= 3 and len(titles["Equal"]) >= 3 and len(titles["Get"]) >= 3
    rationales = [row["text"].replace("\n# ", " ").lower() for row in _by_id(sample_run, "cot_pal").values()]
    for op in ("Sum", "Equal", "Multiple"):
        facts = {f for key, options in FACTS.items() if key.split("@")[0] == op for f in options}
        used = {f for f in facts if any(f.lower() in text for text in rationales)}
        assert len(used) >= 3, (op, used)
    prob_27 = _by_id(sample_run, "cot_program")["prob_27"]["text"]
    assert "AC = 24" in prob_27 and "CB \\perp CA on C" in prob_27 and "y = 48" in prob_27


def test_same_seed_gives_the_same_replies_and_another_seed_other_phrasing(
    sample_run: Path, problems: dict[str, SourceProblem]
) -> None:
    written = _by_id(sample_run, "cot_program")
    prompts = [_program_prompt(p) for p in problems.values()]
    first = [TemplateTeacher(seed=0).reply(p) for p in prompts]
    assert first == [TemplateTeacher(seed=0).reply(p) for p in prompts]
    assert [r.strip() + "\n" for r in first] == [written[pid]["text"] for pid in problems]
    other = [TemplateTeacher(seed=7).reply(p) for p in prompts]
    assert sum(a != b for a, b in zip(first, other, strict=True)) > len(prompts) // 2
    assert all(extract_program(r) == p.program for r, p in zip(other, problems.values(), strict=True))


def test_a_reply_depends_on_its_prompt_not_on_the_batch(problems: dict[str, SourceProblem]) -> None:
    teacher = TemplateTeacher(seed=3)
    some = list(problems.values())[:6]
    requests = [
        GenerationRequest(
            messages=(
                ChatMessage(role="user", content=_first_prompt(p, geodsl.to_pal(p.expression, p.numbers))),
            ),
            params=SamplingParams(temperature=0.0, seed=3),
        )
        for p in some
    ]
    forward = [c[0].text for c in teacher.generate(requests)]
    backward = [c[0].text for c in teacher.generate(requests[::-1])][::-1]
    assert forward == backward
    sampled = teacher.generate(
        [requests[0].model_copy(update={"n": 3, "params": SamplingParams(temperature=1.0)})]
    )
    assert len(sampled[0]) == 3 and len({c.text for c in sampled[0]}) > 1


def test_a_prompt_that_is_not_an_mts_prompt_is_refused() -> None:
    with pytest.raises(BackendError, match="answers only the MTS prompts"):
        TemplateTeacher().generate([GenerationRequest(messages=(ChatMessage(role="user", content="Hi!"),))])


def test_template_replies_are_checked_like_any_teacher(tmp_path: Path) -> None:
    """A template reply whose code was changed is rejected by the same checks (nothing is trusted)."""
    teacher = TemplateTeacher()

    def tampered(request: GenerationRequest) -> list[Completion]:
        reply = teacher.reply(request.messages[-1].content)
        changed = reply.replace('print(f"{float(', 'print(f"{1 + float(').replace(
            "**Op:** `Get", "**Op:** `Sum"
        )
        return [Completion(text=changed, num_tokens=None)]

    run = run_mts(
        MINI,
        tmp_path / "out",
        MTSConfig(jobs=1, llm=TEMPLATE, mixtures=False),
        sampler=FunctionSampler(tampered),
    )
    assert run.stats.traces["cot_pal"] == 0 and run.stats.traces["cot_program"] == 0
    reasons = {d["reason"] for d in _rows(tmp_path / "out" / "drops.jsonl")}
    assert {"cot_pal_failed", "cot_program_mismatch"} <= reasons


def test_the_template_teacher_is_chosen_by_config_and_not_given_a_model(tmp_path: Path) -> None:
    assert TEMPLATE.model == TEMPLATE_TEACHER_MODEL
    config = tmp_path / "teacher.yaml"
    config.write_text("backend: template\nseed: 5\n", encoding="utf-8")
    assert load_llm_config(config).model == TEMPLATE_TEACHER_MODEL
    with pytest.raises(ValidationError, match="leave model out"):
        LLMConfig.model_validate({"backend": "template", "model": "gpt-4o"})
    with pytest.raises(ValidationError, match="reads no images"):
        LLMConfig.model_validate({"backend": "template", "vision": True})


def test_the_per_type_table_counts_candidates_kept_and_lengths(sample_run: Path, tmp_path: Path) -> None:
    stats = compute_stats(sample_run)
    assert stats.candidates == stats.traces  # every candidate verified on the sample
    assert stats.mean_tokens["cot_pal"] > stats.mean_tokens["pal"] > 0
    assert stats.mean_tokens["cot_program"] > stats.mean_tokens["program"] > 0
    header, *rows = format_trace_table([stats])
    assert header[:5] == ["Dataset", "Split", "Trace type", "Candidates", "Kept"]
    assert [r[2] for r in rows] == ["Program", "PAL", "CoT-Program", "CoT-PAL"]
    assert rows[3][3] == str(stats.traces["pal"]) and rows[3][5] == "100.0"

    plain = run_mts(MINI, tmp_path / "plain", MTSConfig(jobs=1, mixtures=False)).stats
    assert plain.candidates == {"program": 8, "pal": 8, "cot_program": 0, "cot_pal": 0}
    _, *plain_rows = format_trace_table([plain])
    assert plain_rows[1][3:6] == ["8", "6", "75.0"] and plain_rows[2][3] == "skipped"


def test_geo_synth_mts_with_the_template_teacher(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "synth",
            "mts",
            str(MINI),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--no-mixtures",
            "--teacher",
            "template",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "cot_program=8, cot_pal=6" in result.stdout and "skipped" not in result.stderr
    stats = runner.invoke(app, ["synth", "mts-stats", str(out)])
    assert stats.exit_code == 0 and "Per trace type" in stats.stdout and "CoT-PAL" in stats.stdout
    both = runner.invoke(
        app, ["synth", "mts", str(MINI), "--out", str(out), "--teacher", "template", "--llm", "x.yaml"]
    )
    assert both.exit_code != 0 and "pass one of them" in both.output


def test_build_sampler_builds_the_template_teacher_for_its_backend() -> None:
    from geosynth.mts._llm import build_sampler

    sampler = build_sampler(LLMConfig.model_validate({"backend": "template", "seed": 7}))
    assert isinstance(sampler, TemplateTeacher) and sampler.seed == 7
