r"""PGPS-format problems from synthesized calculation records, and the corpus they make.

:func:`pgps_problems` turns one checked calculation record (its cut-down figure and diagram) into up
to ``count`` distinct problems in the PGPS9K annotation format (``text``, ``parsing_stru_seqs``,
``parsing_sem_seqs``, ``expression``, ``answer``, ``choices``, ``type``), each executed by geodsl to
the figure's value. The corpus functions work on such records wherever they come from:

* :func:`statement_key` (normalised text and clauses) and :func:`question_key` (the same with point
  names blanked, and the answer): what makes two problems the same; :func:`dedupe` keeps the first;
* :func:`find_leaks`: corpus problems whose statement matches a test-split problem (the check that no
  test problem is used for training);
* :func:`operator_histogram`, :func:`type_histogram`: the mix of a corpus or of a real split.
"""

from __future__ import annotations

import collections
import hashlib
import json
import random
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geodsl import OPERATORS
from geodsl.data import PGPSRecord, load_pgps
from geodsl.errors import DataError
from geosynth.engine import Diagram, Problem, atomic_write, parse_problem
from geosynth.synth._config import PLAIN_WRITING, PGPSDesign, PGPSWriting
from geosynth.synth._pgps_compose import (
    STATABLE,
    Design,
    Written,
    as_variable,
    choose_values,
    design_problem,
    well_posed,
    write_problem,
)
from geosynth.synth._pgps_figure import PGPSFigure, Q, pgps_figure
from geosynth.synth._pgps_phrases import canonical_question
from geosynth.synth._pgps_realised import FIGURE_FIELD, FiguredProblem, figure_from_json
from geosynth.synth._pgps_theorems import Theorem, theorems
from geosynth.synth._records import SynthRecord
from geosynth.synth._render import Layout
from geosynth.synth._sample import Figure
from geosynth.synth.errors import DatasetError, SynthError

__all__ = (
    "PGPSProblem",
    "assemble_pgps",
    "dedupe",
    "find_leaks",
    "operator_histogram",
    "pgps_json",
    "pgps_problems",
    "pgps_shard_lines",
    "problem_from_line",
    "question_key",
    "read_pgps_shards",
    "record_figure",
    "render_problem",
    "statement_key",
    "type_histogram",
)

DEFAULT_LENGTHS = (2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 20, 24, 25, 30)
"""Whole lengths a problem's figure is scaled to (one given length takes one of them)."""
_ATTEMPTS = 8
"""Designs tried per problem asked for."""
_LETTER = 0.4
_VARIABLE = 0.15


@dataclass(frozen=True)
class PGPSProblem:
    """A written PGPS problem with the figure it is about and what its diagram must show."""

    record: PGPSRecord
    """The annotation record (its ``diagram`` is the image file name once rendered)."""
    source: str
    """The id of the synthesized record whose figure it uses."""
    figure: Problem
    """The figure's construction clauses."""
    diagram: Diagram
    """The figure's coordinates."""
    written: Written
    """The given values to label, the extra segments to draw."""

    def figured(self) -> FiguredProblem:
        """The annotation record with its realised figure (:mod:`geosynth.synth._pgps_realised`)."""
        return FiguredProblem(record=self.record, figure=self.written.figure)

    def line(self, *, figure: bool = False) -> dict[str, object]:
        """The problem as one line of a PGPS shard: the annotation entry, its source and its figure.

        With ``figure``, also the realised figure (``realised_figure``), when the problem has one.
        """
        entry: dict[str, object] = {
            **pgps_json(self.record),
            "source": self.source,
            "figure": self.figure.text(),
            "points": [{"name": n, "x": x, "y": y} for n, (x, y) in self.diagram.points.items()],
            "labels": [
                {"kind": q.kind, "points": list(q.pts), "text": text} for q, text in self.written.values
            ],
            "draw": [list(pair) for pair in self.written.draw],
            "right": [list(names) for names in self.written.right],
            "expected": self.written.expected,
        }
        if self.written.lines is not None:  # only when the problem leaves lines out, so older lines match
            entry["lines"] = [list(line) for line in self.written.lines]
        if figure and self.written.figure is not None:
            entry[FIGURE_FIELD] = self.written.figure.model_dump(mode="json")
        return entry


def problem_from_line(entry: dict[str, Any]) -> PGPSProblem:
    """A problem back from one line of a PGPS shard (:meth:`PGPSProblem.line`), e.g. to draw it again.

    Raises:
        DataError: The annotation fields are malformed.
        DatasetError: The realised figure is malformed.
        KeyError: A figure field is missing.
    """
    record = PGPSRecord.build(
        id=entry["id"],
        text=entry["text"],
        stru_clauses=entry["parsing_stru_seqs"],
        sem_clauses=entry["parsing_sem_seqs"],
        expression=entry["expression"],
        answer=entry["answer"],
        type=entry["type"],
        choices=entry["choices"],
        diagram=entry.get("diagram"),
        book=entry.get("book"),
        page=entry.get("page"),
    )
    diagram = Diagram(points={p["name"]: (p["x"], p["y"]) for p in entry["points"]}, attempts=1)
    values = tuple((Q(v["kind"], tuple(v["points"])), v["text"]) for v in entry["labels"])
    draw = tuple((a, b) for a, b in entry["draw"])
    right = tuple((a, b, c, d) for a, b, c, d in entry["right"])
    realised = (
        figure_from_json(entry[FIGURE_FIELD], f"record {entry['id']}") if FIGURE_FIELD in entry else None
    )
    lines = tuple(tuple(line) for line in entry["lines"]) if "lines" in entry else None
    written = Written(
        record=record,
        values=values,
        draw=draw,
        right=right,
        expected=float(entry["expected"]),
        figure=realised,
        lines=lines,
    )
    return PGPSProblem(record, entry["source"], parse_problem(entry["figure"]), diagram, written)


def record_figure(record: SynthRecord) -> Figure:
    """A calculation record's (cut-down) figure, as the sampler's :class:`Figure`.

    Raises:
        SynthError: The record is not a calculation record with a given length.
    """
    if record.task != "calculation" or not record.givens or not record.givens[0].startswith("length "):
        raise SynthError(f"record {record.id} is not a calculation record with a given length")
    _, p, q, _, length = record.givens[0].split()
    diagram = Diagram(points={pt.name: (pt.x, pt.y) for pt in record.points}, attempts=1)
    return Figure(parse_problem(record.problem), diagram, (p, q), int(length))


def _goal_ok(design: Design, fig: PGPSFigure) -> bool:
    """Not a right angle or a straight one, and not a stated equality read back (``AB = AC, AC = 6``)."""
    first = design.steps[0][0]
    if len(design.steps) == 1 and first.op == "Equal" and any(f[0] == "eq" for f in first.facts):
        return False
    value = fig.value(design.goal)
    if design.goal.kind == "ang":
        return abs(value - 90.0) > 1e-6 and value < 179.0
    return value > 1e-9


def _variant(design: Design, fig: PGPSFigure, rng: random.Random) -> None:
    roll = rng.random()
    if roll < _VARIABLE and as_variable(design, fig, rng):
        return
    if design.goal.kind in STATABLE and roll < _VARIABLE + _LETTER:
        design.letter = rng.choice(("x", "y", "z"))


def pgps_problems(
    figure: Figure,
    *,
    source: str,
    seed: int,
    count: int = 4,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    weights: dict[str, float] | None = None,
    writing: PGPSWriting | None = None,
    growth: PGPSDesign | None = None,
) -> list[PGPSProblem]:
    """Up to ``count`` distinct PGPS problems on a calculation figure, each verified by geodsl.

    The choices come from ``seed`` only, so the same figure and seed always give the same problems.
    The writing conventions draw from a source of their own (seeded from ``seed`` too), so the problems
    designed are the same whatever the conventions.

    Args:
        figure: A calculation figure (its ``scale`` segment has length ``length``).
        source: The id of the record the figure belongs to (problem ids are ``{source}-{k}``).
        seed: The seed of the choices.
        count: How many problems to make (fewer when the figure offers fewer).
        lengths: Whole lengths the figure is scaled to.
        weights: Operator weights of the problem's central step (the composer's defaults if ``None``).
        writing: How the problems are written (``PGPSWriting()``, the textbook conventions, if ``None``;
            ``PLAIN_WRITING`` writes them as before those conventions).
        growth: How many steps the problems take (``PGPSDesign()``, the odds of every bundled corpus,
            if ``None``).

    Raises:
        SynthError: The figure has no given length.
    """
    if figure.scale is None or figure.length is None:
        raise SynthError(f"figure of {source} has no given length (not a calculation figure)")
    fig = pgps_figure(figure.problem, figure.diagram, figure.scale, float(figure.length))
    found = theorems(fig)
    rng = random.Random(seed * 31 + 7)
    style = random.Random(seed * 31 + 8)
    writing = PGPSWriting() if writing is None else writing
    plain = writing == PLAIN_WRITING  # the plain writing keeps the checks it was made with
    out: list[PGPSProblem] = []
    keys: set[str] = set()
    for _ in range(count * _ATTEMPTS):
        if len(out) >= count:
            break
        written = _one(fig, found, rng, f"{source}-{len(out)}", lengths, weights, writing, style, growth)
        if written is None:
            continue
        if dedupe([written.record], keys, as_written=plain):
            out.append(PGPSProblem(written.record, source, figure.problem, figure.diagram, written))
    return out


def _one(
    fig: PGPSFigure,
    found: Sequence[Theorem],
    rng: random.Random,
    record_id: str,
    lengths: Sequence[int],
    weights: dict[str, float] | None,
    writing: PGPSWriting,
    style: random.Random,
    growth: PGPSDesign | None,
) -> Written | None:
    design = design_problem(found, rng, weights, growth)
    if design is None or not _goal_ok(design, fig):
        return None
    if not choose_values(design, fig, lengths, rng) or not well_posed(design, found):
        return None
    _variant(design, fig, rng)
    return write_problem(design, fig, rng, record_id, writing=writing, style=style)


# --- the corpus -------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def statement_key(record: PGPSRecord) -> str:
    """What identifies a problem's statement: its text and both clause lists, normalised.

    Case, spacing and clause order do not count. Two records with the same key pose the same problem,
    whatever their programs or ids.
    """
    body = {
        "text": _normal(record.text),
        "stru": sorted(_normal(c) for c in record.stru_clauses),
        "sem": sorted(_normal(c) for c in record.sem_clauses),
    }
    return hashlib.sha1(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


_POINTS = re.compile(r"\b[A-Z](?:'|\d)*(?:[A-Z](?:'|\d)*)*\b")


def question_key(record: PGPSRecord, *, as_written: bool = False) -> str:
    r"""What identifies a problem's question: text and semantic clauses with point names blanked, the answer.

    Two records with the same key ask the same question about the same values, in figures whose points
    are named differently (``Find m \angle ABC.`` with ``AB = AC``, ``m \angle ACB = 60``), in any of
    the phrasings the generator writes (``What is the measure of \angle ABC?``; the text's question is
    put in its canonical form, :func:`geosynth.synth._pgps_phrases.canonical_question`). With
    ``as_written``, the text counts as written (lower-cased): the key of corpora made before the
    generator varied its phrasing, which the plain writing keeps so that it makes them again exactly.
    """
    text = _POINTS.sub("P", " ".join(record.text.split()))
    text = text.lower() if as_written else canonical_question(text)
    sem = sorted(_POINTS.sub("P", " ".join(c.split())) for c in record.sem_clauses)
    body = {"text": text, "sem": sem, "answer": f"{float(record.answer):.2f}"}
    return hashlib.sha1(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


def _keys(record: PGPSRecord, as_written: bool = False) -> tuple[str, str]:
    return f"s{statement_key(record)}", f"q{question_key(record, as_written=as_written)}"


def dedupe(
    records: Iterable[PGPSRecord], seen: set[str] | None = None, *, as_written: bool = False
) -> list[PGPSRecord]:
    """The records whose :func:`statement_key` and :func:`question_key` have not occurred before.

    Earlier means in ``seen`` or earlier in the list; ``seen`` is updated, so a corpus can be deduplicated
    shard by shard. ``as_written``: question keys of the texts as written (:func:`question_key`).
    """
    keys: set[str] = set() if seen is None else seen
    out: list[PGPSRecord] = []
    for record in records:
        mine = _keys(record, as_written)
        if not any(k in keys for k in mine):
            keys.update(mine)
            out.append(record)
    return out


def find_leaks(
    corpus: Iterable[PGPSRecord], tests: Iterable[PGPSRecord], *, as_written: bool = False
) -> list[tuple[str, str]]:
    """Corpus records that pose a test problem: ``(corpus id, test id)`` pairs.

    A corpus record matches a test record when they share their :func:`statement_key` (the same
    statement) or their :func:`question_key` (the same question about the same values, relabelled, in
    any phrasing; ``as_written``: in the same words, the check corpora were made with before the
    generator varied its phrasing).
    """
    known: dict[str, str] = {}
    for test in tests:
        for key in _keys(test, as_written):
            known.setdefault(key, test.id)
    out: list[tuple[str, str]] = []
    for record in corpus:
        hit = next((known[k] for k in _keys(record, as_written) if k in known), None)
        if hit is not None:
            out.append((record.id, hit))
    return out


def operator_histogram(records: Iterable[PGPSRecord]) -> dict[str, int]:
    """How many programs use each operator (an operator counts once per program), most used first."""
    counts: collections.Counter[str] = collections.Counter()
    for record in records:
        counts.update({t for t in record.expression.split() if t in OPERATORS})
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def step_histogram(records: Iterable[PGPSRecord]) -> dict[str, int]:
    """How many programs take each number of operator steps (``Get`` aside), fewest steps first."""
    counts = collections.Counter(
        sum(1 for t in record.expression.split() if t in OPERATORS and t != "Get") for record in records
    )
    return {str(k): counts[k] for k in sorted(counts)}


def type_histogram(records: Iterable[PGPSRecord]) -> dict[str, int]:
    """How many problems have each knowledge type, most common first."""
    counts = collections.Counter(r.knowledge_type for r in records)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def pgps_json(record: PGPSRecord) -> dict[str, object]:
    """A record as one entry of a PGPS annotation file (published field order, ``id`` first)."""
    entry: dict[str, object] = {"id": record.id}
    if record.diagram is not None:
        entry["diagram"] = record.diagram
    entry |= {
        "text": record.text,
        "parsing_stru_seqs": list(record.stru_clauses),
        "parsing_sem_seqs": list(record.sem_clauses),
        "expression": record.expression,
        "answer": record.answer,
        "type": record.type,
        "book": record.book if record.book is not None else "geosynth",
        "page": record.page if record.page is not None else "",
        "choices": list(record.choices),
    }
    return entry


# --- dataset folders -----------------------------------------------------------------------------


def render_problem(
    problem: PGPSProblem, fmt: str = "png", *, seed: int = 0, layout: Layout | None = None
) -> bytes:
    """The diagram of a problem, with its given values written on it, as image bytes.

    Args:
        problem: The problem.
        fmt: ``png`` or ``svg``.
        seed: Label tie-breaking and the SVG id salt.
        layout: The figure's layout made with ``seed`` (problems without extra segments on one figure
            share it); made here when ``None``.

    Raises:
        RenderError: A construction has no drawing or a value names an unknown point.
    """
    from geosynth.synth._pgps_render import render_pgps

    with tempfile.TemporaryDirectory() as folder:
        path = render_pgps(
            problem.figure,
            problem.diagram,
            Path(folder) / f"diagram.{fmt}",
            values=problem.written.values,
            draw=problem.written.draw,
            right=problem.written.right,
            lines=problem.written.lines,
            fmt=fmt,
            seed=seed,
            layout=layout if not problem.written.draw else None,
        )
        return path.read_bytes()


def pgps_shard_lines(
    figure: Figure,
    record: SynthRecord,
    count: int,
    render: bool,
    fmt: str,
    images: dict[str, bytes],
    *,
    figures: bool = False,
    writing: PGPSWriting | None = None,
    growth: PGPSDesign | None = None,
) -> list[str]:
    """The PGPS lines of one calculation record's figure for a dataset shard (diagrams into ``images``).

    With ``figures``, each line also carries the problem's realised figure (``realised_figure``);
    ``writing`` is how the problems are written and ``growth`` how many steps they take
    (:func:`pgps_problems`).
    """
    from geosynth.synth._render import diagram_layout

    lines: list[str] = []
    problems = pgps_problems(
        figure, source=record.id, seed=record.seed, count=count, writing=writing, growth=growth
    )
    layout = diagram_layout(figure.problem, figure.diagram, seed=record.seed) if render and problems else None
    for problem in problems:
        item = problem
        if render:
            name = f"{problem.record.id}.{fmt}"
            images[name] = render_problem(problem, fmt, seed=record.seed, layout=layout)
            item = PGPSProblem(
                problem.record.model_copy(update={"diagram": name}),
                problem.source,
                problem.figure,
                problem.diagram,
                problem.written,
            )
        lines.append(json.dumps(item.line(figure=figures), sort_keys=False, ensure_ascii=False))
    return lines


def read_pgps_shards(out: Path, shards: int | None = None) -> list[list[PGPSRecord]]:
    """The PGPS records of a dataset folder's shards, shard by shard (missing shards are empty).

    Raises:
        DatasetError: A shard file is not PGPS-format JSON Lines.
    """
    folder = out / "pgps" / "data"
    files = (
        sorted(folder.glob("shard-*.jsonl"))
        if shards is None
        else [folder / f"shard-{k:05d}.jsonl" for k in range(shards)]
    )
    out_records: list[list[PGPSRecord]] = []
    for file in files:
        if not file.is_file() or not file.stat().st_size:
            out_records.append([])
            continue
        try:
            out_records.append(load_pgps(file))
        except DataError as exc:
            raise DatasetError(f"PGPS shard {file}: {exc}") from None
    return out_records


def _shard_figures(out: Path, shards: int | None) -> dict[str, object]:
    """The realised figures the shard lines carry, by problem id (none unless written with figures)."""
    folder = out / "pgps" / "data"
    files = (
        sorted(folder.glob("shard-*.jsonl"))
        if shards is None
        else [folder / f"shard-{k:05d}.jsonl" for k in range(shards)]
    )
    found: dict[str, object] = {}
    for file in files:
        if not file.is_file():
            continue
        for line in file.read_text(encoding="utf-8").splitlines():
            if FIGURE_FIELD in line:
                entry = json.loads(line)
                if FIGURE_FIELD in entry:
                    found[str(entry["id"])] = entry[FIGURE_FIELD]
    return found


def assemble_pgps(
    out: Path, shards: int | None = None, exclude: Sequence[PGPSRecord] = (), *, as_written: bool = False
) -> dict[str, object]:
    """Write ``out/pgps/pgps.json`` (the corpus, deduplicated in shard order) and ``out/pgps/stats.json``.

    The corpus file has the published layout (an object keyed by problem id), so
    ``geodsl.data.load_pgps`` and ``geo synth mts`` read it; diagrams are under ``out/pgps/Diagram``.
    Problems whose shard lines carry a realised figure keep it (``realised_figure``), which those
    readers ignore.
    Rebuilt from the shard files on every run, so a resumed run ends with the same corpus.

    Args:
        out: The dataset folder.
        shards: How many shards the run has (``None``: every shard file there).
        exclude: Problems the corpus must not pose (test splits): matches (:func:`find_leaks`) are dropped.
        as_written: Compare question texts as written (:func:`question_key`): how corpora of the plain
            writing were assembled, kept so they are made again exactly.

    Returns:
        The statistics written: problems kept, duplicates and test matches dropped, operator, step-count
        and type histograms.

    Raises:
        DatasetError: A shard file is not PGPS-format JSON Lines.
    """
    seen: set[str] = set()
    kept: list[PGPSRecord] = []
    total = 0
    for records in read_pgps_shards(out, shards):
        total += len(records)
        kept.extend(dedupe(records, seen, as_written=as_written))
    unique = len(kept)
    posed = {corpus_id for corpus_id, _ in find_leaks(kept, exclude, as_written=as_written)}
    kept = [r for r in kept if r.id not in posed]
    corpus = {r.id: {k: v for k, v in pgps_json(r).items() if k != "id"} for r in kept}
    for record_id, realised in _shard_figures(out, shards).items():
        if record_id in corpus:  # written with figures: the corpus keeps them
            corpus[record_id][FIGURE_FIELD] = realised
    folder = out / "pgps"
    atomic_write(
        folder / "pgps.json", (json.dumps(corpus, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    )
    stats: dict[str, object] = {
        "problems": len(kept),
        "duplicates": total - unique,
        "test_matches": len(posed),
        "figures": len({r.id.rsplit("-", 1)[0] for r in kept}),
        "operators": operator_histogram(kept),
        "steps": step_histogram(kept),
        "types": type_histogram(kept),
    }
    atomic_write(folder / "stats.json", (json.dumps(stats, indent=2) + "\n").encode("utf-8"))
    return stats
