"""The LLM stages: CoT-PAL (rewrite, verify by execution, repair) and CoT-Program (rewrite, check tokens)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import geodsl
from geosynth.mts._extract import equation_drift, extract_code, program_mismatch, rationale_missing
from geosynth.mts._llm import CachedLLM
from geosynth.mts._models import SourceProblem
from geosynth.mts._prompts import PromptName, format_clauses, format_operators, template
from geosynth.mts._runner import ScriptRunner
from geosynth.mts._verify import check_answer, drop_row, trace_row

__all__ = ("cot_pal_shard", "cot_program_shard", "prompt_fingerprints")


def prompt_fingerprints(stage: str) -> list[str]:
    """The prompt fingerprints a stage's resume key includes."""
    names: tuple[PromptName, ...] = ("cot_pal", "cot_pal_repair") if stage == "cot_pal" else ("cot_program",)
    return [template(n).fingerprint for n in names]


def _first_prompt(p: SourceProblem, pal: str) -> str:
    return template("cot_pal").render(
        {
            "question": p.text,
            "clauses": format_clauses(p.stru_clauses, p.sem_clauses),
            "pal": pal.rstrip("\n"),
        }
    )


def _repair_prompt(p: SourceProblem, pal: str, script: str | None, error: str) -> str:
    return template("cot_pal_repair").render(
        {
            "question": p.text,
            "answer": p.answer,
            "error": error,
            "pal": pal.rstrip("\n"),
            "script": (script or "(the previous reply contained no script)").rstrip("\n"),
        }
    )


def cot_pal_shard(
    problems: Mapping[str, SourceProblem],
    verified: Sequence[Mapping[str, Any]],
    llm: CachedLLM,
    runner: ScriptRunner,
    *,
    rel_tol: float,
    max_passes: int,
) -> list[dict[str, Any]]:
    """Stage ``cot_pal``: rewrite each verified PAL script with rationales; verify; repair failures.

    Pass 1 asks for the commented script; every later pass sends the failure, the reference PAL
    script and the failing script back. An instance still failing after ``max_passes`` passes is
    dropped with its last error.
    """
    pals = {r["id"]: r["trace"]["text"] for r in verified if "trace" in r}
    last: dict[str, tuple[str | None, str]] = {}
    history: dict[str, list[dict[str, Any]]] = {i: [] for i in pals}
    done: dict[str, dict[str, Any]] = {}
    pending = list(pals)
    for pass_no in range(1, max_passes + 1):
        if not pending:
            break
        prompts = [
            _first_prompt(problems[i], pals[i])
            if pass_no == 1
            else _repair_prompt(problems[i], pals[i], *last[i])
            for i in pending
        ]
        replies = llm.complete(prompts, [problems[i].diagram for i in pending])
        scripts = [extract_code(reply) for reply in replies]
        runnable: list[tuple[str, str]] = []
        for i, script in zip(pending, scripts, strict=True):
            problem_why = (
                "the reply contains no script"
                if script is None
                else equation_drift(pals[i], script) or rationale_missing(script)
            )
            if problem_why is None and script is not None:
                runnable.append((i, script))
            else:
                last[i] = (script, problem_why or "")
        for (i, script), result in zip(runnable, runner.run([s for _, s in runnable]), strict=True):
            why = check_answer(result, problems[i].answer_value, rel_tol)
            if why is None:
                history[i].append({"pass": pass_no, "error": None})
                done[i] = trace_row(
                    i, "cot_pal", script, passes=pass_no, answer=result.answer, history=history[i]
                )
            else:
                last[i] = (
                    script,
                    f"the script {why}" if result.error is None else f"the script failed: {why}",
                )
        for i in pending:
            if i not in done:
                history[i].append({"pass": pass_no, "error": last[i][1]})
        pending = [i for i in pending if i not in done]
    for i in pending:
        done[i] = drop_row(
            i,
            "cot_pal",
            "cot_pal_failed",
            f"no verified rewrite in {max_passes} passes; last error: {last[i][1]}",
        )
        done[i]["history"] = history[i]
    return [done[i] for i in pals]


def _program_prompt(p: SourceProblem) -> str:
    ops = [s.op for s in geodsl.parse_program(p.expression).steps]
    return template("cot_program").render(
        {
            "question": p.text,
            "clauses": format_clauses(p.stru_clauses, p.sem_clauses),
            "operators": format_operators(ops),
            "program": p.program,
        }
    )


def cot_program_shard(problems: Sequence[SourceProblem], llm: CachedLLM) -> list[dict[str, Any]]:
    """Stage ``cot_program``: one numbered explanation per program step, the program checked token for token.

    A reply without a final program line gets one appended, so every kept trace ends with a
    program that can be parsed back out.
    """
    replies = llm.complete([_program_prompt(p) for p in problems], [p.diagram for p in problems])
    rows: list[dict[str, Any]] = []
    for p, reply in zip(problems, replies, strict=True):
        why = program_mismatch(p.program, reply)
        if why is not None:
            rows.append(drop_row(p.id, "cot_program", "cot_program_mismatch", why))
            continue
        text = reply.strip()
        if "final program" not in text.lower():
            text += f"\nFinal program: {p.program}"
        rows.append(trace_row(p.id, "cot_program", text + "\n"))
    return rows
