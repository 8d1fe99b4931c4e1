"""Critique data from the policy's own program traces, labelled exactly on the problems' realised figures.

The glue of ``geo prm figure-data`` and ``geo prm figure-eval``: it joins geosynth (the realised figures,
``figure_step_labels``, ``corrupt_program``), geodsl (the program language, answers), geotts (the policy as
a ``Sampler``) and geoprm (the program layout, labelled solutions, critiques, records, step F1), which no
package below the CLI may import together.

A policy solution is its program trace; the critic judges it in :class:`geoprm.programs.ProgramLayout`,
one operator application per step. Each step is labelled by ``figure_step_labels`` on the problem's
figure; a step that does not parse (and every step after it) is wrong. The first wrong step's
correction is a step of the verified reference program that is correct at that position after the
solution's verified steps (it must fix a new unknown, or read the answer).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geo_cli.pipeline._state import done_lines

if TYPE_CHECKING:
    from geodsl.data import PGPSRecord
    from geoprm.backends.transformers import TransformersCritic
    from geoprm.labelled import LabelledSolution, LabelledStep
    from geoprm.programs import ProgramLayout
    from geosynth.synth import FiguredProblem, StepLabel
    from geotts import Sampler, StepJudgement

Progress = Callable[[str, int, int], None]
Report = Callable[[str], None]

HEADER = "Solution:"
"""The line the program policy writes before its program (its PA records' targets start with it)."""


def layout() -> ProgramLayout:
    """The program layout for geodsl's operators."""
    from geodsl.ops import OPERATORS
    from geoprm.programs import ProgramLayout

    return ProgramLayout(OPERATORS, header=HEADER)


def record_prompt(rec: PGPSRecord) -> str:
    """The policy's prompt for a program trace of a PGPS record, in the clauses setting (its PA records' text)."""
    from geosynth.mts import pa_prompt

    return pa_prompt(rec.text, [*rec.stru_clauses, *rec.sem_clauses], "program", "clauses")


def program_prompt(problem: FiguredProblem) -> str:
    """The policy's prompt for a program trace of a figured problem (:func:`record_prompt`)."""
    return record_prompt(problem.record)


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    from geosynth.engine import atomic_write

    atomic_write(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode())


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically (geosynth's one atomic writer)."""
    from geosynth.engine import atomic_write

    atomic_write(path, text.encode("utf-8"))


def _append(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        handle.flush()


# --- the figured problems -------------------------------------------------------------------------------


def figured_problems(
    corpus: Path, figured: Path | None, synth: Path | None, work: Path, figures: int | None, report: Report
) -> tuple[list[FiguredProblem], Path]:
    """The corpus's problems with their realised figures, and the file the figures are read from.

    A corpus written with ``pgps_figures`` carries them. Otherwise they come from ``figured``, a PGPS file
    with realised figures (an earlier regeneration's ``pgps.json``), or are made again from ``synth``,
    the folder ``geo synth generate`` wrote the corpus's figures to: its manifest gives the generator's
    configuration and seed, and the first ``figures`` figures (all by default) are generated again into
    ``work/figures-<count>`` with their realised figures (resumable: finished shards are kept). A corpus
    problem whose twin differs from it is reported and left out; one without a twin is left out.

    Raises:
        InputError: the corpus carries no figures and neither source is given.
    """
    from geo_cli._errors import InputError
    from geosynth.synth import load_figured

    own = load_figured(corpus)
    if own and all(p.figure is not None for p in own):
        return own, corpus
    if figured is not None:
        source = figured
    elif synth is not None:
        source = _regenerate(synth, work, figures)
    else:
        raise InputError(
            f"corpus {corpus} carries no realised figures; give --figured (a PGPS file with them) or --synth "
            "(the folder the corpus was generated in)"
        )
    made = {p.record.id: p for p in load_figured(source)}
    kept: list[FiguredProblem] = []
    for problem in own:
        twin = made.get(problem.record.id)
        if twin is None or twin.figure is None:
            continue  # a figure past the ones asked for
        a, b = problem.record, twin.record
        if (a.text, a.expression, a.numbers, a.answer) != (b.text, b.expression, b.numbers, b.answer):
            report(f"record {a.id}: the problem with the realised figure differs from the corpus's; left out")
            continue
        kept.append(problem.model_copy(update={"figure": twin.figure}))
    return kept, source


def _regenerate(synth: Path, work: Path, figures: int | None) -> Path:
    """Generate the first ``figures`` figures of a synth folder again, with realised figures; their pgps.json."""
    from geo_cli._errors import InputError
    from geosynth.synth import Manifest, config_from_mapping, write_dataset

    manifest_path = synth / "manifest.json"
    if not manifest_path.is_file():
        raise InputError(f"synth folder {synth} has no manifest.json")
    manifest = Manifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
    if not manifest.pgps:
        raise InputError(f"synth folder {synth} was made without PGPS problems (--pgps 0)")
    count = min(figures or manifest.n, manifest.n)
    out = work / f"figures-{count}"
    write_dataset(
        config_from_mapping(manifest.config),
        count,
        manifest.seed,
        out,
        task=manifest.task,
        shard_size=manifest.shard_size,
        pgps=manifest.pgps,
        pgps_figures=True,
    )
    return out / "pgps" / "pgps.json"


def load_problems(source: Path) -> dict[str, FiguredProblem]:
    """The figured problems of a file, by id (the file ``figure-data`` recorded)."""
    from geosynth.synth import load_figured

    return {p.record.id: p for p in load_figured(source)}


# --- sampling -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SamplingSpec:
    """How the policy samples."""

    n: int
    temperature: float
    max_tokens: int
    seed: int
    batch: int


def sample_solutions(
    problems: Sequence[FiguredProblem], sampler: Sampler, spec: SamplingSpec, path: Path, progress: Progress
) -> dict[str, list[str]]:
    """``spec.n`` program traces per problem, by problem id; resumable through ``path`` (JSON Lines).

    Problems are sampled in chunks of ``spec.batch``, chunk k with seed ``spec.seed + k``, and each
    finished chunk is appended to ``path``, so a resumed run samples exactly what an uninterrupted one
    would.
    """
    from geotts import ChatMessage, GenerationRequest, SamplingParams

    done = {row["problem"]: list(row["texts"]) for row in done_lines(path)}
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = [problems[i : i + spec.batch] for i in range(0, len(problems), spec.batch)]
    finished = sum(len(c) for c in chunks if all(p.record.id in done for p in c))
    progress("sample", finished, len(problems))
    for k, chunk in enumerate(chunks):
        if all(p.record.id in done for p in chunk):
            continue
        params = SamplingParams(temperature=spec.temperature, max_tokens=spec.max_tokens, seed=spec.seed + k)
        requests = [
            GenerationRequest(
                messages=(ChatMessage(role="user", content=program_prompt(p)),),
                n=spec.n,
                params=params,
                trace_type="program",
                numbers=tuple(p.record.numbers),
            )
            for p in chunk
        ]
        outputs = sampler.generate(requests)
        drawn = {p.record.id: [c.text for c in comps] for p, comps in zip(chunk, outputs, strict=True)}
        _append(path, ({"problem": pid, "texts": texts} for pid, texts in drawn.items()))
        done.update(drawn)
        finished += len(chunk)
        progress("sample", finished, len(problems))
    return done


# --- labels ---------------------------------------------------------------------------------------------


_FIGURE_REASONS = (
    "of the figure",
    "; the figure has ",
    "is not a value the problem gives",
    "the problem has no",
)


def _sentence(text: str) -> str:
    """One line ending with a full stop; a leading word (not a quantity's name such as ``x``) capitalised."""
    text = " ".join(text.split())
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first.isalpha() and first.islower():
        text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else f"{text}."


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items)


def _value(v: float) -> str:
    return f"{v:.4g}"


def _step(text: str, label: StepLabel | None, error: str | None) -> LabelledStep:
    """A step's labelled form, its notes in our template words (``label`` None: it does not parse)."""
    from geoprm.labelled import LabelledStep

    op, *args = text.split()
    if label is None:
        return LabelledStep(
            text=text,
            correct=False,
            failed="logic",
            intent=f"Write {text}.",
            figure_note="It reads nothing that can be checked on the figure.",
            logic_note=_sentence(f"it is not a well-formed step: {error}"),
        )
    solved = _listed(sorted(label.solved))
    if op == "Get":
        intent = f"Give {args[0]} as the answer." if args else "Give the answer."
    elif solved:
        intent = f"Use {op} on {_listed(args)} to find {solved}."
    else:
        intent = f"Use {op} on {_listed(args)} as a check."
    if label.correct:
        if op == "Get":
            figure, logic = "It is the value asked for.", "It was found by an earlier step."
        elif label.solved:
            found = ", ".join(f"{k} = {_value(v)}" for k, v in sorted(label.solved.items()))
            figure, logic = f"{found} fits the figure.", "Its operands are given or found earlier."
        else:
            figure, logic = "The values it uses fit the figure.", "Its equation holds for the known values."
        return LabelledStep(text=text, correct=True, intent=intent, figure_note=figure, logic_note=logic)
    if any(part in label.reason for part in _FIGURE_REASONS) and op != "Get":
        return LabelledStep(
            text=text,
            correct=False,
            failed="figure",
            intent=intent,
            figure_note=_sentence(label.reason),
            logic_note="The equation itself is solved right.",
        )
    return LabelledStep(
        text=text,
        correct=False,
        failed="logic",
        intent=intent,
        figure_note="The values it reads fit the figure.",
        logic_note=_sentence(label.reason),
    )


def _parseable(steps: Sequence[str]) -> tuple[int, str | None]:
    """How many leading steps form a program that parses, and why the next one does not."""
    from geodsl import GeoDSLError, parse_instantiated

    for k in range(1, len(steps) + 1):
        try:
            parse_instantiated(" ".join(steps[:k]))
        except GeoDSLError as exc:
            return k - 1, str(exc).splitlines()[0].split(" (token ")[0]
    return len(steps), None


def label_steps(problem: FiguredProblem, steps: Sequence[str]) -> list[LabelledStep]:
    """Every step labelled on the problem's figure; a step that does not parse, and all after it, are wrong.

    Raises:
        StepLabelError: the problem has no figure.
    """
    from geosynth.synth import figure_step_labels

    good, error = _parseable(steps)
    labels = figure_step_labels(problem, " ".join(steps[:good])).steps if good else ()
    out = [_step(text, label, None) for text, label in zip(steps[:good], labels, strict=True)]
    if good < len(steps):
        out.append(_step(steps[good], None, error))
        out.extend(
            _step(text, None, "it follows a step that is not well formed") for text in steps[good + 1 :]
        )
    return out


_UNKNOWN = re.compile(r"^V(\d+)$")


def _renamings(step: str, prefix: Sequence[str]) -> list[str]:
    """The step, then the step with unknowns the prefix already names renamed to fresh ones (fewest first).

    A reference step's ``V1`` may be a quantity the solution's own ``V1`` is not; renaming it to an
    unknown the solution has not used lets the step stand after the solution's verified steps.
    """
    tokens = step.split()
    taken = {t for s in prefix for t in s.split() if _UNKNOWN.match(t)}
    clashing = sorted({t for t in tokens if t in taken})
    used = [int(m[1]) for t in {*taken, *tokens} if (m := _UNKNOWN.match(t))]
    fresh = max(used, default=-1) + 1
    out = [step]
    for size in range(1, len(clashing) + 1):
        for chosen in itertools.combinations(clashing, size):
            names = {old: f"V{fresh + i}" for i, old in enumerate(chosen)}
            out.append(" ".join(names.get(t, t) for t in tokens))
    return out


def correction(
    problem: FiguredProblem, steps: Sequence[str], first: int, reference: Sequence[str]
) -> str | None:
    """A reference step that is correct at position ``first`` after the solution's verified steps, or None.

    The reference step at the same position is tried first, then the others in order (those the prefix
    already has are skipped), each as written and then with clashing unknowns renamed
    (:func:`_renamings`); the step must fix a new unknown, or be a ``Get`` that reads the answer.
    """
    from geosynth.synth import StepLabelError, figure_step_labels

    prefix = list(steps[:first])
    order = [reference[first]] if first < len(reference) else []
    order += [s for s in reference if s not in order]
    for step in order:
        for candidate in _renamings(step, prefix):
            if candidate in prefix:
                continue
            try:
                label = figure_step_labels(problem, " ".join([*prefix, candidate])).steps[first]
            except StepLabelError:
                continue
            if label.correct and (label.solved or candidate.split()[0] == "Get"):
                return candidate
    return None


def _answer(text: str, problem: FiguredProblem) -> float | None:
    from geodsl.traces import candidate_answer

    return candidate_answer(text, "program", numbers=problem.record.numbers)


@dataclass(frozen=True)
class Labelled:
    """The labelled solutions of a run and how many records could not be labelled."""

    solutions: list[LabelledSolution]
    errors: int


def labelled_solutions(
    problems: Sequence[FiguredProblem],
    samples: dict[str, list[str]],
    *,
    corruptions: int,
    references: bool,
    seed: int,
    report: Report,
) -> Labelled:
    """Label the policy's samples, the reference program and corrupted reference programs of each problem.

    The reference program is added when ``references``; ``corruptions`` corrupted copies of it follow.

    A solution with no ``Get`` step is labelled unfinished (it gives no record but stays a best-of-N
    candidate); a record that cannot be labelled is reported on one line naming it, and the batch goes on.
    """
    from geodsl import GeoDSLError, instantiate
    from geoprm.labelled import LabelledSolution
    from geosynth.synth import CORRUPTION_KINDS, StepLabelError, corrupt_program

    lay = layout()
    rng = random.Random(seed)
    out: list[LabelledSolution] = []
    errors = 0
    for problem in problems:
        rec = problem.record
        try:
            reference = lay.split(instantiate(rec.expression, rec.numbers).text)
        except GeoDSLError as exc:
            report(f"record {rec.id}: its reference program does not instantiate: {exc}")
            errors += 1
            continue
        texts = [(f"{rec.id}/s{i}", "policy", t) for i, t in enumerate(samples.get(rec.id, []))]
        if references:
            texts.append((f"{rec.id}/r", "reference", f"{HEADER}\n{' '.join(reference)}"))
        offset = rng.randrange(len(CORRUPTION_KINDS))
        for j in range(
            corruptions
        ):  # the kinds in turn from a drawn one; a kind the program offers none of is skipped
            for t in range(len(CORRUPTION_KINDS)):
                kind = CORRUPTION_KINDS[(offset + j + t) % len(CORRUPTION_KINDS)]
                changed = corrupt_program(rec.expression, rec.numbers, kind, rng)
                if changed is not None:
                    text = f"{HEADER}\n{instantiate(changed.program, rec.numbers).text}"
                    texts.append((f"{rec.id}/c{j}", f"corrupted:{kind}", text))
                    break
        question = program_prompt(problem)
        for sid, origin, text in texts:
            steps = lay.steps(text)
            if not steps:
                steps = ("(nothing)",)  # an empty trace: one step that does not parse
            try:
                labelled = label_steps(problem, steps)
            except StepLabelError as exc:
                report(str(exc))
                errors += 1
                continue
            first = next((i for i, s in enumerate(labelled) if not s.correct), None)
            fix = None if first is None else correction(problem, steps, first, reference)
            out.append(
                LabelledSolution(
                    id=sid,
                    problem=rec.id,
                    question=question,
                    steps=tuple(labelled),
                    correction=fix,
                    origin=origin,
                    source="geosynth",
                    answer=_answer(lay.one_line(text), problem),
                    gold=rec.answer_value,
                    finished=any(s.split()[0] == "Get" for s in steps),
                )
            )
    return Labelled(solutions=out, errors=errors)


@dataclass(frozen=True)
class CritiqueData:
    """What :func:`write_critique_data` wrote: the counts of its summary and the statistics it saved."""

    problems: int
    solutions: int
    errors: int
    stats: dict[str, Any]


def write_critique_data(
    problems: Sequence[FiguredProblem],
    sampler: Sampler,
    spec: SamplingSpec,
    out: Path,
    *,
    corruptions: int,
    references: bool,
    balanced: bool,
    report: Report,
    progress: Progress,
    about: dict[str, str],
    verdict_first: bool = False,
) -> CritiqueData:
    """Sample, label and write critique records.

    Writes ``out/samples.jsonl`` (resumable), ``solutions.jsonl``, ``records.jsonl`` (geoprm SFT records),
    ``data_table.md`` and ``stats.json`` (the statistics, with ``about``: where the corpus, figures and
    policy came from). The one path of ``geo prm figure-data`` and of the pipeline's critique data;
    ``spec.seed`` also seeds the corruptions and the balancing.

    Raises:
        InputError: no solution could be labelled.
    """
    from geo_cli._errors import InputError
    from geoprm.labelled import build_labelled_records, data_table

    out.mkdir(parents=True, exist_ok=True)
    drawn = sample_solutions(problems, sampler, spec, out / "samples.jsonl", progress)
    labelled = labelled_solutions(
        problems, drawn, corruptions=corruptions, references=references, seed=spec.seed, report=report
    )
    if not labelled.solutions:
        raise InputError(f"none of the {len(problems)} problems' solutions could be labelled")
    write_jsonl(out / "solutions.jsonl", (s.model_dump(mode="json") for s in labelled.solutions))
    built = build_labelled_records(
        labelled.solutions, rng=random.Random(spec.seed), balanced=balanced, verdict_first=verdict_first
    )
    write_jsonl(out / "records.jsonl", (r.model_dump(mode="json") for r in built.records))
    stats = {
        **built.stats.model_dump(mode="json"), "records": built.stats.records, "errors": labelled.errors,
        "samples_per_problem": spec.n, "temperature": spec.temperature, "seed": spec.seed,
        "verdict_first": verdict_first, **about,
    }  # fmt: skip
    write_text(out / "data_table.md", data_table(built.stats))
    write_text(out / "stats.json", json.dumps(stats, indent=2, sort_keys=True) + "\n")
    return CritiqueData(
        problems=len(problems), solutions=len(labelled.solutions), errors=labelled.errors, stats=stats
    )


# --- evaluation of a critic -----------------------------------------------------------------------------


def critique_solutions(
    solutions: Sequence[LabelledSolution],
    critic: TransformersCritic,
    path: Path,
    batch: int,
    progress: Progress,
) -> dict[str, dict[str, Any]]:
    """The critic's critique of every solution, by solution id; resumable through ``path`` (JSON Lines)."""
    from geoprm import to_step_judgement
    from geotts import StepScoreRequest

    done = {row["id"]: row for row in done_lines(path)}
    todo = [s for s in solutions if s.id not in done]
    progress("critique", len(solutions) - len(todo), len(solutions))
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        requests = [
            StepScoreRequest(question=s.question, images=tuple(Path(i) for i in s.images), steps=s.step_texts)
            for s in chunk
        ]
        rows: list[dict[str, Any]] = []
        for solution, result in zip(chunk, critic.critique(requests), strict=True):
            judgement = to_step_judgement(result.parsed, result.scores)
            rows.append(
                {
                    "id": solution.id,
                    "critique": result.text,
                    "finish_reason": result.finish_reason,
                    "verdict": result.scores.verdict,
                    "judgement": judgement.model_dump(mode="json"),
                }
            )
        _append(path, rows)
        done.update({row["id"]: row for row in rows})
        progress("critique", len(solutions) - len(todo) + start + len(chunk), len(solutions))
    return done


def judgement_of(row: dict[str, Any]) -> StepJudgement:
    """The recorded judgement of a critique line."""
    from geotts import StepJudgement

    return StepJudgement.model_validate_json(json.dumps(row["judgement"]))


def correction_is_correct(
    problem: FiguredProblem, solution_steps: Sequence[str], judgement: StepJudgement
) -> bool | None:
    """Whether the critic's correction of the step it flags is correct on the figure.

    The correction follows the solution's steps before the flagged one; None when the critic flags no
    step or writes no correction.
    """
    from geosynth.synth import StepLabelError, figure_step_labels

    first, fix = judgement.first_wrong, judgement.correction
    if first is None or fix is None:
        return None
    steps = [*solution_steps[:first], *layout().split(fix)]
    if len(steps) <= first:
        return False
    try:
        labels = figure_step_labels(problem, " ".join(steps))
    except StepLabelError:
        return False
    return all(s.correct for s in labels.steps[first:])


def evaluate(
    solutions: Sequence[LabelledSolution],
    rows: dict[str, dict[str, Any]],
    problems: dict[str, FiguredProblem],
    ns: Sequence[int],
) -> dict[str, Any]:
    """The summary of a critic's run.

    Step F1 (all solutions and by origin), best-of-N by its scores against random choice and
    self-consistency on the policy's samples, and how often its corrections are correct.
    """
    from geoprm.evaluation import EvalCandidate, EvalProblem, accuracy_curve, step_f1

    judged = [(s, judgement_of(rows[s.id])) for s in solutions if s.id in rows]
    finished = [(s, j) for s, j in judged if s.finished]  # step labels vouch for finished solutions only
    origins = sorted({s.origin for s, _ in finished})
    f1 = {"all": step_f1((s.labels, j) for s, j in finished).model_dump(mode="json")}
    for origin in origins:
        f1[origin] = step_f1((s.labels, j) for s, j in finished if s.origin == origin).model_dump(mode="json")
    flagged = [(s, j) for s, j in judged if j.first_wrong is not None and j.correction is not None]
    right = [
        (s, j, correction_is_correct(problems[s.problem], s.step_texts, j))
        for s, j in flagged
        if s.problem in problems
    ]
    at_error = [ok for s, j, ok in right if s.first_wrong is not None and j.first_wrong == s.first_wrong]
    pools: dict[str, list[EvalCandidate]] = {}
    gold: dict[str, float] = {}
    for s, j in judged:
        if s.origin == "policy" and s.gold is not None:
            pools.setdefault(s.problem, []).append(EvalCandidate.from_judgement(s.answer, j))
            gold[s.problem] = s.gold
    top = max(ns)
    recorded = [
        EvalProblem(id=p, answer=gold[p], sampled=tuple(c)) for p, c in pools.items() if len(c) >= top
    ]
    curves: list[dict[str, Any]] = []
    if recorded:
        for how in ("mean", "min", "max"):
            for row in accuracy_curve(recorded, ns, how=how):
                curves.append({"aggregation": how, **row.model_dump(mode="json")})
    verdicts: dict[str, int] = {}
    for s, _ in judged:
        verdict = str(rows[s.id]["verdict"])
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    cut = sum(1 for s, _ in judged if rows[s.id]["finish_reason"] == "length")
    return {
        "solutions": len(judged),
        "unfinished": len(judged) - len(finished),
        "step_f1": f1,
        "verdicts": verdicts,
        "cut_off": cut,
        "corrections": {
            "written": len(right),
            "correct": sum(1 for _, _, ok in right if ok),
            "at_the_first_wrong_step": len(at_error),
            "correct_there": sum(1 for ok in at_error if ok),
        },
        "bon": {"problems": len(recorded), "ns": list(ns), "curves": curves},
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def report_markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown tables."""
    lines = [f"# Critic {summary['model']} on {summary['data']}", ""]
    lines += [
        f"{summary['solutions']} solutions judged; verdicts {summary['verdicts']}; "
        f"{summary['cut_off']} critiques cut off at the token limit.",
        "",
    ]
    lines += ["## Step F1 against the figure labels", ""]
    lines += [
        "| solutions | judged | steps | macro F1 | F1 correct | F1 wrong | first wrong step found | all-correct passed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, f in summary["step_f1"].items():
        lines.append(
            f"| {name} | {f['solutions']} | {f['steps']} | {f['macro_f1']:.3f} | {f['f1_correct']:.3f} | "
            f"{f['f1_incorrect']:.3f} | {f['first_wrong_found']}/{f['with_error']} | "
            f"{f['all_correct_found']}/{f['without_error']} |"
        )
    c = summary["corrections"]
    lines += [
        "",
        "## Corrections",
        "",
        f"{c['correct']} of {c['written']} corrections are correct on the figure; at the true first wrong "
        f"step: {c['correct_there']} of {c['at_the_first_wrong_step']}.",
        "",
    ]
    bon = summary["bon"]
    lines += [f"## Best-of-N by critic score on {bon['problems']} problems (accuracy in %)", ""]
    lines += [
        "| aggregation | N | random choice | best-of-N | self-consistency |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in bon["curves"]:
        lines.append(
            f"| {row['aggregation']} | {row['n']} | {_pct(row['policy'])} | {_pct(row['bon'])} | "
            f"{_pct(row['self_consistency'])} |"
        )
    return "\n".join(lines) + "\n"
