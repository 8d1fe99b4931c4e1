"""Evaluation reports from recorded pools: tables (Markdown + JSON) and PNG figures (``geotts[report]``).

Figures: accuracy vs average samples per strategy, CG-MTE termination depths, accuracy by
termination depth, unique-answer counts, and trace-pattern shares in the unified top-k.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from geotts._evaluate import (
    CurvePoint,
    ErrorCoupling,
    Evaluation,
    RecordedPool,
    evaluate,
    is_correct,
    load_pools,
)
from geotts.backends._common import require

__all__ = (
    "CurvePoint",
    "ErrorCoupling",
    "Evaluation",
    "RecordedPool",
    "evaluate",
    "is_correct",
    "load_pools",
    "write_report",
)

_LABELS = {
    "sc_beam": "SC (beam)",
    "mte": "Standard MTE",
    "cg_mte": "CG-MTE",
    "adaptive_rank": "Adaptive beam SC (rank)",
    "adaptive_pattern": "Adaptive beam SC (pattern)",
}


def _table(title: str, header: list[str], rows: list[list[str]], note: str = "") -> list[str]:
    align = "|---|" + "---:|" * (len(header) - 1)
    out = ["", f"## {title}", "", "| " + " | ".join(header) + " |", align]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return [*out, "", note] if note else out


def _label(name: str) -> str:
    return _LABELS.get(name, name)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _markdown(ev: Evaluation) -> str:
    c = ev.coupling
    lines = [f"# Test-time scaling report ({ev.problems} problems, traces: {', '.join(ev.order)})"]
    lines += _table(
        "Accuracy vs samples",
        ["strategy", "budget", "ASN", "accuracy (%)"],
        [[_label(p.strategy), str(p.budget), f"{p.asn:.2f}", _pct(p.accuracy)] for p in ev.curves],
    )
    lines += _table(
        "Adaptive baselines at the largest budget",
        ["method", "accuracy (%)", "ASN"],
        [[_label(p.strategy), _pct(p.accuracy), f"{p.asn:.2f}"] for p in ev.baselines],
    )
    lines += _table(
        "CG-MTE termination",
        ["depth", "problems", "accuracy (%)"],
        [[str(d), str(ev.termination.get(d, 0)), _pct(a)] for d, a in ev.accuracy_by_depth.items()],
        note=f"Fallbacks: {ev.fallbacks} of {ev.problems}.",
    )
    lines += _table(
        "Error coupling of top-1 answers",
        ["pairwise same wrong (%)", ">= 3 same wrong (%)", "all same wrong (%)"],
        [[_pct(c.pairwise_same_wrong), _pct(c.at_least_3_same_wrong), _pct(c.all_same_wrong)]],
    )
    lines += _table(
        "Top-1 accuracy per trace type",
        ["trace", "accuracy (%)"],
        [[t, _pct(a)] for t, a in ev.top1_accuracy.items()],
    )
    lines += _table(
        "Unique answers per problem",
        ["unique answers", "problems"],
        [[str(k), str(n)] for k, n in ev.unique_answers.items()],
    )
    if ev.trace_shares:
        names = sorted(next(iter(ev.trace_shares.values())))
        lines += _table(
            "Trace-pattern shares in the unified top-k (%)",
            ["k", *names],
            [[str(k), *(f"{100 * s[n]:.0f}" for n in names)] for k, s in ev.trace_shares.items()],
        )
    return "\n".join(lines) + "\n"


def _axes(ev: Evaluation, title: str, xlabel: str, ylabel: str) -> tuple[Any, Any]:
    figure = require("matplotlib.figure", "report").Figure  # no pyplot: no global figure state
    fig = figure(figsize=(6.4, 4.2), dpi=110)
    ax = fig.subplots()
    ax.set_title(f"{title} ({ev.problems} problems)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def _accuracy_vs_samples(ev: Evaluation) -> Any:
    fig, ax = _axes(ev, "Accuracy vs average samples", "average samples per problem (ASN)", "accuracy (%)")
    for name in ("sc_beam", "mte", "cg_mte"):
        pts = [c for c in ev.curves if c.strategy == name]
        if pts:
            ax.plot([c.asn for c in pts], [100 * c.accuracy for c in pts], marker="o", label=_LABELS[name])
    for c in ev.baselines:
        if c.strategy.startswith("adaptive"):
            ax.scatter([c.asn], [100 * c.accuracy], marker="x", s=60, label=_LABELS[c.strategy], zorder=3)
    ax.legend(loc="best", fontsize=8)
    return fig


def _termination_depth(ev: Evaluation) -> Any:
    depths = sorted(ev.accuracy_by_depth)
    fig, ax = _axes(ev, "CG-MTE termination depth", "termination depth d", "problems")
    ax.bar(
        [str(d) for d in depths],
        [ev.termination.get(d, 0) for d in depths],
        color="tab:blue",
        label="consensus",
    )
    if ev.fallbacks:
        last = depths[-1]
        ax.bar(
            [str(last)],
            [ev.fallbacks],
            bottom=[ev.termination.get(last, 0)],
            color="tab:gray",
            label="fallback",
        )
    ax.legend()
    return fig


def _accuracy_by_depth(ev: Evaluation) -> Any:
    depths = sorted(ev.accuracy_by_depth)
    fig, ax = _axes(ev, "CG-MTE accuracy by termination depth", "termination depth d", "accuracy (%)")
    ax.bar([str(d) for d in depths], [100 * ev.accuracy_by_depth[d] for d in depths], color="tab:green")
    ax.set_ylim(0, 100)
    return fig


def _unique_answers(ev: Evaluation) -> Any:
    fig, ax = _axes(ev, "Distinct answers among the candidates", "unique answers", "problems")
    ax.bar([str(k) for k in ev.unique_answers], list(ev.unique_answers.values()), color="tab:purple")
    return fig


def _trace_shares(ev: Evaluation) -> Any:
    ks = list(ev.trace_shares)
    fig, ax = _axes(ev, "Trace-pattern shares in the unified top-k", "k", "share (%)")
    bottom = [0.0] * len(ks)
    for name in sorted(ev.trace_shares[ks[0]]):
        vals = [100 * ev.trace_shares[k][name] for k in ks]
        ax.bar([str(k) for k in ks], vals, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return fig


#: Figures: file name, renderer, and whether the evaluation has the data for it.
_FIGURES: tuple[tuple[str, Callable[[Evaluation], Any], Callable[[Evaluation], bool]], ...] = (
    ("accuracy_vs_samples.png", _accuracy_vs_samples, lambda ev: bool(ev.curves)),
    ("termination_depth.png", _termination_depth, lambda ev: bool(ev.accuracy_by_depth)),
    ("accuracy_by_depth.png", _accuracy_by_depth, lambda ev: bool(ev.accuracy_by_depth)),
    ("unique_answers.png", _unique_answers, lambda ev: bool(ev.unique_answers)),
    ("trace_shares.png", _trace_shares, lambda ev: bool(ev.trace_shares)),
)


def _plots(ev: Evaluation, out: Path) -> list[Path]:
    paths: list[Path] = []
    for name, render, available in _FIGURES:
        if available(ev):
            render(ev).savefig(out / name, bbox_inches="tight")
            paths.append(out / name)
    return paths


def write_report(evaluation: Evaluation, out_dir: str | Path) -> list[Path]:
    """Write ``report.md``, ``summary.json`` and the PNG figures of ``evaluation`` into ``out_dir``.

    Args:
        evaluation: The result of :func:`evaluate`.
        out_dir: Folder to write (created if missing).

    Returns:
        The files written.

    Raises:
        MissingExtraError: when matplotlib is not installed (``pip install "geotts[report]"``).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pngs = _plots(evaluation, out)
    md = out / "report.md"
    md.write_text(
        _markdown(evaluation) + "\n" + "".join(f"![{p.stem}]({p.name})\n" for p in pngs), encoding="utf-8"
    )
    js = out / "summary.json"
    js.write_text(json.dumps(evaluation.model_dump(mode="json"), indent=2), encoding="utf-8")
    return [md, js, *pngs]
