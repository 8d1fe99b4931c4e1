"""Statistics of a dataset folder: goal types, construction counts, solution lengths, check rate, diversity."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from geosynth.engine import worker_context
from geosynth.synth._config import SynthConfig
from geosynth.synth._dataset import read_records
from geosynth.synth._generate import check_record
from geosynth.synth._records import SynthRecord
from geosynth.synth.errors import DatasetError

NGRAM = 3
"""Word n-grams used for the distinct-n-gram diversity of question texts."""


class Summary(BaseModel):
    """Mean, median and maximum of a count."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    mean: float
    """Mean."""
    median: float
    """Median."""
    max: int
    """Maximum."""


class SynthStats(BaseModel):
    """The statistics ``geo synth stats`` prints and writes to ``stats.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    records: int
    """Records in the folder."""
    tasks: dict[str, int]
    """Records per task."""
    goal_types: dict[str, int]
    """Records per goal type."""
    clauses: dict[str, int]
    """Records per number of clauses of the (minimal) problem."""
    constructions: dict[str, int]
    """Uses of each construction over all records."""
    solution_tokens: Summary
    """Whitespace tokens of the solution (natural-language text when present, else the formal steps)."""
    solution_steps: Summary
    """Steps of the formal solution."""
    checked: int | None
    """Records the engine re-solved from their statement with the same result (``None``: not re-checked)."""
    check_rate: float | None
    """``checked / records``."""
    text_field: str
    """Which text the diversity figures measure: ``question`` or ``problem`` (the formal line)."""
    unique_texts: float
    """Distinct texts / records."""
    distinct_ngrams: float
    """Distinct word 3-grams / all word 3-grams over the texts."""
    images: int
    """Records with an image file present."""
    calc_crosschecked: int
    """Calculation records the calculation solver answered (cross-check on)."""
    calc_agreed: int
    """Of those, answers that agree with the engine's."""
    pgps_programs: int
    """Records with a verified PGPS program."""


def _summary(values: list[int]) -> Summary:
    if not values:
        return Summary(mean=0.0, median=0.0, max=0)
    return Summary(
        mean=round(statistics.fmean(values), 3), median=float(statistics.median(values)), max=max(values)
    )


def _diversity(texts: list[str]) -> tuple[float, float]:
    if not texts:
        return 0.0, 0.0
    grams: list[tuple[str, ...]] = []
    for text in texts:
        words = text.split()
        grams.extend(tuple(words[i : i + NGRAM]) for i in range(len(words) - NGRAM + 1))
    unique = len(set(texts)) / len(texts)
    return round(unique, 4), round(len(set(grams)) / len(grams), 4) if grams else 0.0


def _agrees(record: SynthRecord) -> bool:
    claimed, other = record.answer_value, record.calc_answer
    return claimed is not None and other is not None and abs(claimed - other) <= 1e-6 * max(1.0, abs(claimed))


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items()))


def records_stats(
    records: list[SynthRecord], folder: Path | None = None, checked: int | None = None
) -> SynthStats:
    """Statistics of records (images are counted under ``folder`` when given)."""
    use_question = bool(records) and all(r.question for r in records)
    texts = [(r.question or "") if use_question else r.problem for r in records]
    unique, ngrams = _diversity(texts)
    tokens = [
        len(r.solution_text.split()) if r.solution_text else len(" ".join(r.solution).split())
        for r in records
    ]
    images = sum(1 for r in records if r.image and folder is not None and (folder / r.image).is_file())
    crossed = [r for r in records if r.calc_answer is not None]
    return SynthStats(
        records=len(records),
        tasks=_sorted(Counter(r.task for r in records)),
        goal_types=_sorted(Counter(r.goal_type for r in records)),
        clauses=_sorted(Counter(str(r.n_clauses) for r in records)),
        constructions=_sorted(
            Counter(c for r in records for part in r.constructions for c in part.split("+"))
        ),
        solution_tokens=_summary(tokens),
        solution_steps=_summary([r.n_steps for r in records]),
        checked=checked,
        check_rate=None if checked is None or not records else round(checked / len(records), 4),
        text_field="question" if use_question else "problem",
        unique_texts=unique,
        distinct_ngrams=ngrams,
        images=images,
        calc_crosschecked=len(crossed),
        calc_agreed=sum(1 for r in crossed if _agrees(r)),
        pgps_programs=sum(1 for r in records if r.pgps_program),
    )


def _recheck(args: tuple[str, str]) -> bool:
    config_json, line = args
    config = SynthConfig.model_validate_json(config_json)
    return check_record(SynthRecord.model_validate_json(line, strict=False), config)


def dataset_stats(folder: Path, *, recheck: bool = True, jobs: int = 1) -> SynthStats:
    """Statistics of a dataset folder; with ``recheck`` every record is re-solved by the engine.

    Args:
        folder: A folder written by :func:`geosynth.synth.write_dataset`.
        recheck: Re-solve every record from its statement (the answer-check rate).
        jobs: Worker processes for the re-check.

    Raises:
        DatasetError: The folder is not a synthesized dataset.
    """
    records = read_records(folder)
    checked = None
    if recheck:
        config = SynthConfig.model_validate(_manifest_config(folder), strict=False).model_dump_json()
        work = [(config, r.model_dump_json()) for r in records]
        if jobs <= 1:
            checked = sum(map(_recheck, work))
        else:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context()) as pool:
                checked = sum(pool.map(_recheck, work, chunksize=8))
    return records_stats(records, folder, checked)


def _manifest_config(folder: Path) -> dict[str, object]:
    path = folder / "manifest.json"
    if not path.is_file():
        raise DatasetError(f"{folder} has no manifest.json (not a synthesized dataset?)")
    data = json.loads(path.read_text(encoding="utf-8"))
    config = data.get("config")
    if not isinstance(config, dict):
        raise DatasetError(f"{path}: no 'config' mapping")
    return config
