"""Dataset statistics in the shape of ReTTS-PGPS's Table 6 (appendix A.2.1), recomputed from an output folder's files."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from geosynth.mts._mix import default_token_count
from geosynth.mts._models import TRACE_TYPES, MTSModel
from geosynth.mts.errors import MTSInputError

__all__ = ("TRACE_CHECKS", "DatasetStats", "compute_stats", "format_stats_table", "format_trace_table")

TRACE_CHECKS: Mapping[str, str] = MappingProxyType(
    {
        "program": "none: the source program, kept as it is",
        "pal": "sandbox run prints the stored answer",
        "cot_program": "program restated token for token",
        "cot_pal": "key lines kept, rationale present, sandbox run prints the stored answer",
    }
)
"""What a candidate of each trace type must pass to be kept."""

#: The drop reasons that reject a candidate of each type at its own stage (not upstream).
_REJECTED_AT: dict[str, tuple[str, ...]] = {
    "program": (),
    "pal": ("pal_translation", "pal_failed", "pal_mismatch"),
    "cot_program": ("cot_program_mismatch",),
    "cot_pal": ("cot_pal_failed",),
}


class DatasetStats(MTSModel):
    """Counts of one MTS output folder (one split of one dataset)."""

    dataset: str
    """Input file name."""
    split: str
    """``train``, ``test``, ``val`` or the name given."""
    records: int
    """Records in the input file."""
    problems: int
    """Records that loaded and whose program instantiated."""
    traces: dict[str, int]
    """Traces kept per type."""
    candidates: dict[str, int]
    """Instances each trace type was attempted for: every usable problem for program, PAL and
    CoT-Program (0 when the CoT stages were skipped), the verified PAL scripts for CoT-PAL."""
    mean_tokens: dict[str, float]
    """Mean length of the kept traces per type, in words and punctuation marks
    (:func:`geosynth.mts.default_token_count`, the mixtures' counter); 0.0 for a type with none."""
    mts: int
    """Synthesized traces (PAL + CoT-Program + CoT-PAL): the "# MTS" column of ReTTS-PGPS's Table 6."""
    mts_all: int
    """Synthesized traces plus the original programs: "# MTS-All"."""
    pal_verified: int
    """PAL scripts that verified."""
    pal_failed: int
    """PAL scripts that did not (each explained in drops.jsonl)."""
    cot_pal_by_pass: dict[str, int]
    """CoT-PAL traces by the pass that verified them (``"1"``, ``"2"``, ``"3"``)."""
    cot_pal_failed: int
    """Instances with no verified CoT-PAL rewrite within the allowed passes."""
    cot_program_mismatched: int
    """CoT-Program replies rejected because their program differs from the source."""
    drops: dict[str, int]
    """Drops per reason."""
    llm: str | None
    """The model that wrote the CoT traces; None when the CoT stages were skipped."""


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                yield json.loads(line)


def compute_stats(out: Path) -> DatasetStats:
    """Recount an output folder's traces and drops.

    Raises:
        MTSInputError: the folder has no ``manifest.json`` (it is not an MTS output folder).
    """
    manifest_path = out / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MTSInputError(f"{str(out)!r} is not an MTS output folder (no readable manifest.json)") from exc
    traces = {t: 0 for t in TRACE_TYPES}
    tokens = {t: 0 for t in TRACE_TYPES}
    passes: Counter[str] = Counter()
    for t in TRACE_TYPES:
        for row in _lines(out / "traces" / f"{t}.jsonl"):
            traces[t] += 1
            tokens[t] += default_token_count(row["text"])
            if t == "cot_pal":
                passes[str(row["passes"])] += 1
    drops: Counter[str] = Counter(row["reason"] for row in _lines(out / "drops.jsonl"))
    candidates = {t: traces[t] + sum(drops[r] for r in _REJECTED_AT[t]) for t in TRACE_TYPES}
    mts = traces["pal"] + traces["cot_program"] + traces["cot_pal"]
    return DatasetStats(
        dataset=manifest["input"]["name"],
        split=manifest["split"],
        records=manifest["input"]["records"],
        problems=manifest["input"]["problems"],
        traces=traces,
        candidates=candidates,
        mean_tokens={t: round(tokens[t] / traces[t], 1) if traces[t] else 0.0 for t in TRACE_TYPES},
        mts=mts,
        mts_all=mts + traces["program"],
        pal_verified=traces["pal"],
        pal_failed=drops["pal_failed"] + drops["pal_mismatch"] + drops["pal_translation"],
        cot_pal_by_pass={k: passes[k] for k in sorted(passes, key=int)},
        cot_pal_failed=drops["cot_pal_failed"],
        cot_program_mismatched=drops["cot_program_mismatch"],
        drops=dict(sorted(drops.items())),
        llm=manifest["llm"],
    )


_COLUMNS = (
    "Dataset",
    "Split",
    "Records",
    "#Program",
    "#PAL",
    "#CoT-Program",
    "#CoT-PAL",
    "#MTS",
    "#MTS-All",
    "PAL fail",
    "CoT-PAL by pass",
    "CoT-PAL fail",
)


def _row(s: DatasetStats) -> list[str]:
    by_pass = "/".join(f"{v}" for v in s.cot_pal_by_pass.values()) if s.llm else "skipped"

    def cot(n: int) -> str:
        return str(n) if s.llm else "skipped"

    return [
        s.dataset,
        s.split,
        str(s.records),
        str(s.traces["program"]),
        str(s.traces["pal"]),
        cot(s.traces["cot_program"]),
        cot(s.traces["cot_pal"]),
        str(s.mts),
        str(s.mts_all),
        str(s.pal_failed),
        by_pass,
        cot(s.cot_pal_failed),
    ]


def format_stats_table(stats: Sequence[DatasetStats]) -> list[list[str]]:
    """The header and one row per folder, as text cells (the CLI draws them)."""
    return [list(_COLUMNS), *(_row(s) for s in stats)]


_TRACE_COLUMNS = ("Dataset", "Split", "Trace type", "Candidates", "Kept", "Kept %", "Mean tokens", "Check")
_TRACE_NAMES = {"program": "Program", "pal": "PAL", "cot_program": "CoT-Program", "cot_pal": "CoT-PAL"}


def format_trace_table(stats: Sequence[DatasetStats]) -> list[list[str]]:
    """Per folder and trace type: candidates, kept (verified), kept share, mean length, and the check.

    The header first, then four rows per folder (text cells; the CLI draws them). A CoT type whose
    stage was skipped reads ``skipped``.
    """
    rows: list[list[str]] = [list(_TRACE_COLUMNS)]
    for s in stats:
        for t in TRACE_TYPES:
            skipped = t in ("cot_program", "cot_pal") and not s.llm
            tried, kept = s.candidates[t], s.traces[t]
            rows.append(
                [
                    s.dataset,
                    s.split,
                    _TRACE_NAMES[t],
                    "skipped" if skipped else str(tried),
                    "skipped" if skipped else str(kept),
                    "-" if skipped or not tried else f"{100 * kept / tried:.1f}",
                    "-" if skipped or not kept else f"{s.mean_tokens[t]:.1f}",
                    TRACE_CHECKS[t],
                ]
            )
    return rows
