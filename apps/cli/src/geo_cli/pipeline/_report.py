"""The report stage: one HTML page and its Markdown twin, with tables, plots and an example gallery.

Everything the page shows is read from the evaluate stage's ``results.json``, ``candidates.jsonl``
and figures (plus the train stage's loss history when there is one); the page and its images are
written into ``<workdir>/report/`` with relative links, so the folder can be copied or served as is.
"""

from __future__ import annotations

import html
import json
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from geo_cli.pipeline._context import StageContext
from geo_cli.pipeline._state import atomic_write_text, read_state

__all__ = ("build_report", "run_report")

_NAMES = {
    "sc_sample": "SC (sampling)", "sc_beam": "SC (beam)", "mte": "Standard MTE", "cg_mte": "CG-MTE",
    "adaptive_rank": "Adaptive beam SC (rank)", "adaptive_pattern": "Adaptive beam SC (pattern)",
}  # fmt: skip
_TTS_FIGURES = (
    ("termination_depth.png", "CG-MTE termination depth"),
    ("accuracy_by_depth.png", "CG-MTE accuracy by termination depth"),
    ("trace_shares.png", "Trace-pattern shares in the unified beam"),
    ("unique_answers.png", "Distinct answers per problem"),
)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


Table = tuple[str, list[str], list[list[str]]]


def _label(name: str) -> str:
    return _NAMES.get(name, name)


def _main_table(res: dict[str, Any]) -> Table:
    tts = res["tts"]
    rows = [[f"Greedy ({t})", "1", "1.00", _pct(a)] for t, a in res["greedy"].items()]
    top = res["sc_sample"][-1]
    rows.append([_NAMES["sc_sample"], str(top["budget"]), f"{top['asn']:.2f}", _pct(top["accuracy"])])
    mte = [c for c in tts["curves"] if c["strategy"] == "mte"][-1]
    rows.append([_NAMES["mte"], str(mte["budget"]), f"{mte['asn']:.2f}", _pct(mte["accuracy"])])
    for p in tts["baselines"]:
        rows.append(
            [
                _label(p["strategy"]),
                str(p["budget"]),
                f"{p['asn']:.2f}",
                _pct(p["accuracy"]),
            ]
        )
    if "refined_bon" in res:
        rb = res["refined_bon"]
        rows.append(
            [f"Refined best-of-N (N = {rb['n']})", str(rb["n"]), f"{rb['n']:.2f}", _pct(rb["accuracy"])]
        )
    return "Main results", ["method", "budget", "ASN", "accuracy (%)"], rows


def _tables(res: dict[str, Any]) -> list[Table]:
    tts = res["tts"]
    c = tts["coupling"]
    depth_rows = [
        [str(d), str(tts["termination"].get(str(d), 0)), _pct(a)] for d, a in tts["accuracy_by_depth"].items()
    ]
    depth_rows.append(["fallback", str(tts["fallbacks"]), ""])
    curve = [[_label(p["strategy"]), str(p["budget"]), f"{p['asn']:.2f}", _pct(p["accuracy"])]
             for p in [*res["sc_sample"], *tts["curves"]]]  # fmt: skip
    out: list[Table] = [
        _main_table(res),
        ("Accuracy vs samples", ["strategy", "budget", "ASN", "accuracy (%)"], curve),
        ("CG-MTE termination depth", ["depth", "problems", "accuracy (%)"], depth_rows),
        ("Error coupling of top-1 answers", ["pairwise same wrong (%)", ">= 3 same wrong (%)", "all same wrong (%)"],
         [[_pct(c["pairwise_same_wrong"]), _pct(c["at_least_3_same_wrong"]), _pct(c["all_same_wrong"])]]),
    ]  # fmt: skip
    if tts["trace_shares"]:
        names = sorted(next(iter(tts["trace_shares"].values())))
        out.append(("Trace-pattern shares in the unified top-k (%)", ["k", *names],
                    [[k, *(f"{100 * s[n]:.0f}" for n in names)] for k, s in tts["trace_shares"].items()]))  # fmt: skip
    return out


def _curve_figure(res: dict[str, Any], out: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=110)
    ax = fig.subplots()
    curves = [*res["sc_sample"], *res["tts"]["curves"]]
    for name in ("sc_sample", "sc_beam", "mte"):
        pts = [p for p in curves if p["strategy"] == name]
        if pts:
            ax.plot(
                [p["asn"] for p in pts], [100 * p["accuracy"] for p in pts], marker=".", label=_NAMES[name]
            )
    for p in res["tts"]["baselines"]:
        if p["strategy"] != "sc_beam":
            marker = "*" if p["strategy"] == "cg_mte" else "x"
            label = f"{_label(p['strategy'])} (D = {res['depth']})"
            ax.scatter([p["asn"]], [100 * p["accuracy"]], marker=marker, s=120, zorder=3, label=label)
    top = max([100 * p["accuracy"] for p in [*curves, *res["tts"]["baselines"]]], default=0.0)
    ax.set_ylim(-1, max(10.0, top * 1.15))
    ax.set_title(f"Accuracy vs average samples ({res['problems']} problems)")
    ax.set_xlabel("average samples per problem (ASN)")
    ax.set_ylabel("accuracy (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.savefig(out, bbox_inches="tight")
    return out


def _loss_figure(losses: Sequence[Sequence[float]], out: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.4), dpi=110)
    ax = fig.subplots()
    ax.plot([x for x, _ in losses], [y for _, y in losses], marker=".")
    ax.set_title("Training loss (joint)")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("loss")
    ax.grid(alpha=0.3)
    fig.savefig(out, bbox_inches="tight")
    return out


def _fmt(x: Any) -> str:
    return "failed" if x is None else f"{x:g}" if isinstance(x, float | int) else str(x)


def _example(row: dict[str, Any], order: Sequence[str], depth: int) -> dict[str, Any]:
    """The gallery entry of one problem: its traces, the votes CG-MTE counted, and the decision."""
    import geotts
    from geotts.report import is_correct

    decision = geotts.cg_mte({t: row["traces"][t] for t in order}, order=list(order), depth=depth)
    votes = Counter(_fmt(a) for _, answers in decision.pool for a in answers)
    return {
        "id": row["id"], "question": row["question"], "diagram": row.get("diagram"), "gold": row["gold"],
        "traces": [(t, row.get("texts", {}).get(t, ""), row["traces"][t][0]) for t in order],
        "votes": votes.most_common(), "answer": decision.answer, "depth": decision.depth,
        "fallback": decision.fallback, "correct": is_correct(decision.answer, row["gold"]),
    }  # fmt: skip


def _html_table(t: Table) -> str:
    title, header, rows = t
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return (
        f"<h2>{html.escape(title)}</h2>\n<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"
    )


def _md_table(t: Table) -> str:
    title, header, rows = t
    lines = [f"## {title}", "", "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _html_example(ex: dict[str, Any]) -> str:
    img = (
        f'<img src="gallery/{html.escape(ex["diagram"])}" alt="diagram of {html.escape(ex["id"])}">'
        if ex["image"]
        else ""
    )
    traces = "".join(
        f"<details><summary>{html.escape(t)}: answer {html.escape(_fmt(a))}</summary><pre>{html.escape(text) or '(not kept)'}</pre></details>"
        for t, text, a in ex["traces"]
    )
    votes = ", ".join(f"{html.escape(a)} &times; {n}" for a, n in ex["votes"])
    verdict = "correct" if ex["correct"] else "wrong"
    how = "fallback" if ex["fallback"] else f"consensus at depth {ex['depth']}"
    return (
        f'<div class="card"><h3>{html.escape(ex["id"])}</h3>{img}<p class="q">{html.escape(ex["question"])}</p>'
        f"{traces}<p><b>Votes:</b> {votes or 'none'}</p><p><b>Decision:</b> {html.escape(_fmt(ex['answer']))} "
        f'({how}); gold {ex["gold"]:g}: <span class="{verdict}">{verdict}</span></p></div>'
    )


def _md_example(ex: dict[str, Any]) -> str:
    lines = [f"### {ex['id']}", ""]
    if ex["image"]:
        lines += [f"![diagram of {ex['id']}](gallery/{ex['diagram']})", ""]
    lines += [ex["question"], ""]
    for t, text, a in ex["traces"]:
        lines += [f"**{t}** (answer {_fmt(a)}):", "", "```", text or "(not kept)", "```", ""]
    votes = ", ".join(f"{a} x {n}" for a, n in ex["votes"]) or "none"
    how = "fallback" if ex["fallback"] else f"consensus at depth {ex['depth']}"
    lines += [f"Votes: {votes}. Decision: {_fmt(ex['answer'])} ({how}); gold {ex['gold']:g}: "
              f"{'correct' if ex['correct'] else 'wrong'}.", ""]  # fmt: skip
    return "\n".join(lines)


_CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}figure{display:inline-block;margin:.5em}figure img{max-width:520px}
.gallery{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ccc;border-radius:6px;padding:8px;width:500px}
.card img{max-width:240px}pre{white-space:pre-wrap;font-size:11px;background:#f6f6f6;padding:4px}
.correct{color:#080}.wrong{color:#b00}"""


def build_report(evaluate_dir: Path, out: Path, *, title: str, gallery: int, train_dir: Path | None = None,
                 images_dir: Path | None = None) -> list[Path]:  # fmt: skip
    """Write ``index.html`` and ``report.md`` (with ``figures/`` and ``gallery/``) into ``out``.

    Args:
        evaluate_dir: The evaluate stage's folder (``results.json``, ``candidates.jsonl``, ``tts/``).
        out: The report folder.
        title: Page title.
        gallery: How many examples the gallery shows.
        train_dir: The train stage's folder, for the loss curve (None: no training section).
        images_dir: Where the problems' diagrams are (None: the gallery has no images).

    Returns:
        The two pages.
    """
    res = json.loads((evaluate_dir / "results.json").read_text(encoding="utf-8"))
    rows = [
        json.loads(x)
        for x in (evaluate_dir / "candidates.jsonl").read_text(encoding="utf-8").splitlines()
        if x
    ]
    figures, pictures = out / "figures", out / "gallery"
    figures.mkdir(parents=True, exist_ok=True)
    pictures.mkdir(exist_ok=True)
    shown = [("accuracy_vs_samples.png", "Accuracy vs samples (SC, MTE) with the CG-MTE point")]
    _curve_figure(res, figures / shown[0][0])
    for name, caption in _TTS_FIGURES:
        if (evaluate_dir / "tts" / name).is_file():
            shutil.copy2(evaluate_dir / "tts" / name, figures / name)
            shown.append((name, caption))
    state = read_state(train_dir) if train_dir is not None else None
    if state is not None and state.summary.get("losses"):
        _loss_figure(state.summary["losses"], figures / "training_loss.png")
        shown.append(("training_loss.png", f"Training loss ({state.summary['global_step']} steps)"))
    examples = [_example(r, res["order"], res["depth"]) for r in rows if "texts" in r][:gallery]
    for ex in examples:
        source = images_dir / ex["diagram"] if images_dir is not None and ex["diagram"] else None
        ex["image"] = source is not None and source.is_file()
        if source is not None and ex["image"]:
            shutil.copy2(source, pictures / ex["diagram"])
    tables = _tables(res)
    intro = (f"{res['problems']} test problems; trace types {', '.join(res['order'])}; D = {res['depth']} "
             f"(budgets 1..{len(res['order']) * res['depth']}); {res['tokens']} tokens generated.")  # fmt: skip
    figs_html = "".join(
        f'<figure><img src="figures/{n}" alt="{html.escape(c)}"><figcaption>{html.escape(c)}</figcaption></figure>'
        for n, c in shown
    )
    page = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>",
            _html_table(tables[0]), f"<h2>Figures</h2>{figs_html}", *(_html_table(t) for t in tables[1:]),
            "<h2>Examples</h2><div class='gallery'>", *(_html_example(e) for e in examples), "</div></body></html>"]  # fmt: skip
    md = [f"# {title}", "", intro, "", _md_table(tables[0]), "## Figures", "",
          *(f"![{c}](figures/{n})\n" for n, c in shown), *(_md_table(t) for t in tables[1:]),
          "## Examples", "", *(_md_example(e) for e in examples)]  # fmt: skip
    atomic_write_text(out / "index.html", "\n".join(page) + "\n")
    atomic_write_text(out / "report.md", "\n".join(md) + "\n")
    return [out / "index.html", out / "report.md"]


def run_report(ctx: StageContext) -> dict[str, Any]:
    """The report stage."""
    cfg = ctx.config
    train = ctx.workdir / "train" if cfg.train is not None and cfg.train.enabled else None
    pages = build_report(
        ctx.workdir / "evaluate", ctx.folder, title=cfg.report.title or f"geo pipeline report: {cfg.name}",
        gallery=cfg.report.gallery, train_dir=train, images_dir=ctx.workdir / "data" / "images",
    )  # fmt: skip
    return {"html": str(pages[0]), "markdown": str(pages[1])}
