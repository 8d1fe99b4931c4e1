"""The report stage: one HTML page and its Markdown twin that explain the run and show its results.

The page opens with what was run (the model, its size, the data, how the diagram reached the model)
and what its figures can be expected to show, then a glossary, the MTS statistics and training loss
when those stages ran, one section per evaluation split (greedy accuracy by trace type, CG-MTE against
SC with the samples each needs, the accuracy-against-samples curves, where the model fails by problem
type and operator, examples), and the ReTTS-PGPS paper's own figures, marked as the paper's.

Everything is read from the evaluate stage's ``results.json``, the splits' ``candidates.jsonl`` and
figures (plus the data, mts and train stages' summaries when they ran); the page and its images are
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

__all__ = ("PAPER_FIGURES", "build_report", "run_report")

_NAMES = {
    "sc_sample": "SC (sampling)", "sc_beam": "SC (beam)", "mte": "Standard MTE", "cg_mte": "CG-MTE",
    "adaptive_rank": "Adaptive beam SC (rank)", "adaptive_pattern": "Adaptive beam SC (pattern)",
}  # fmt: skip
_TRACES = {"program": "Program", "pal": "PAL", "cot_program": "CoT-Program", "cot_pal": "CoT-PAL"}
_TTS_FIGURES = (
    ("termination_depth.png", "CG-MTE termination depth"),
    ("accuracy_by_depth.png", "CG-MTE accuracy by termination depth"),
    ("trace_shares.png", "Trace-pattern shares in the unified beam"),
    ("unique_answers.png", "Distinct answers per problem"),
)

PaperRow = tuple[str, str, float, int | None, float | None, str]
PAPER_FIGURES: dict[str, tuple[PaperRow, ...]] = {
    "PGPS9K": (
        ("Greedy (PA training on MTS-All)", "Qwen3-VL-8B", 71.2, 1, 1.0, "Table 1"),
        ("SC (beam)", "Qwen3-VL-8B", 76.7, 40, 40.0, "Table 5"),
        ("CG-MTE, D = 10", "Qwen3-VL-8B", 76.0, 40, 4.89, "Table 5"),
        ("Adaptive beam SC (rank)", "Qwen3-VL-8B", 75.2, 40, 4.68, "Table 5"),
        ("Adaptive beam SC (pattern)", "Qwen3-VL-8B", 75.8, 40, 12.72, "Table 5"),
        ("SC (beam)", "Qwen2.5-VL-3B", 62.0, 40, 40.0, "Table 5"),
        ("CG-MTE, D = 10", "Qwen2.5-VL-3B", 62.1, 40, 5.09, "Table 5"),
        ("Ground-truth diagram parses", "Inter-GPS (solver)", 59.8, None, None, "Table 1"),
    ),
    "Geometry3K": (
        ("Greedy (PA training on MTS-All)", "Qwen3-VL-8B", 74.5, 1, 1.0, "Table 1"),
        ("SC", "Qwen3-VL-8B", 80.1, 40, 40.0, "Table 9"),
        ("Ground-truth diagram parses", "Inter-GPS (solver)", 64.2, None, None, "Table 1"),
    ),
}
"""Figures quoted from the ReTTS-PGPS paper by benchmark: (method, model, accuracy %, budget, ASN, table).
Its models are PA-trained vision-language models that see the diagram image; it reports CG-MTE on PGPS9K only."""

_GLOSSARY = (
    ("Trace type", "The form of a solution the model is asked for. Program: a PGPS solution program, run on "
     "geodsl's executor. PAL: a Python script, run in geodsl's sandbox. CoT-Program: a step-by-step "
     "explanation naming each operator, ending with the program. CoT-PAL: a Python script with a comment "
     "before each equation giving the geometry behind it."),
    ("Greedy", "One candidate per trace type, decoded greedily (the most likely token at every step)."),
    ("SC", "Self-consistency: a majority vote over k candidates for the bare question, sampled (SC sampling) "
     "or the top k of one beam search (SC beam); budget k."),
    ("MTE", "Standard multi-trace ensemble: a vote over D candidates of each of the V trace types "
     "(V x D candidates per problem)."),
    ("CG-MTE", "Consensus-guided MTE: at depth d = 1, 2, ..., D pool the first d candidates of every trace "
     "type and stop as soon as one answer is the unique most frequent; otherwise go one depth deeper."),
    ("Depth", "How many candidates per trace type CG-MTE has read when it stops (its termination depth)."),
    ("Fallback", "A problem where no unique most frequent answer appears even at depth D; CG-MTE then answers "
     "with the first CoT-PAL candidate (the last trace type when CoT-PAL is not used)."),
    ("ASN", "Average samples needed per problem: the candidates a strategy reads, averaged over the problems "
     "(V x termination depth for CG-MTE, k for SC at budget k)."),
    ("Accuracy", "Share of problems whose answer is within a relative 1e-3 of the gold answer; a candidate "
     "that is cut off or does not execute casts no vote."),
)  # fmt: skip

Table = tuple[str, list[str], list[list[str]]]
Block = tuple[str, Any]
"""One piece of the page: ``h2``, ``h3``, ``p``, ``table``, ``figures``, ``banner``, ``glossary``, ``gallery`` or
``critiques``."""


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _label(name: str) -> str:
    return _NAMES.get(name, name)


def _size(n: int) -> str:
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:.1f}{suffix}"
    return str(n)


def _legacy_splits(res: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A results file without ``splits`` (one split, greedy as a fraction) as one split entry."""
    greedy = {t: 100.0 * a for t, a in res["greedy"].items()}
    entry = {
        "problems": res["problems"], "folder": ".", "source": "", "benchmark": None, "greedy": greedy,
        "best_trace": max(greedy, key=lambda t: greedy[t]), "sc_sample": res["sc_sample"], "tts": res["tts"],
        "tokens": res.get("tokens", 0), "by_type": {}, "by_operator": {},
    }  # fmt: skip
    if "refined_bon" in res:
        entry["refined_bon"] = res["refined_bon"]
    return {"test": entry}


def _main_table(name: str, entry: dict[str, Any], depth: int) -> Table:
    """CG-MTE against SC (and the other strategies) at the largest budget, with the paper's beside."""
    tts = entry["tts"]
    best = entry["best_trace"]
    rows = [["this run", f"Greedy ({_TRACES.get(best, best)}, the best trace type)", "1", "1.00",
             f"{entry['greedy'][best]:.1f}"]]  # fmt: skip
    top = entry["sc_sample"][-1]
    rows.append(
        ["this run", _NAMES["sc_sample"], str(top["budget"]), f"{top['asn']:.2f}", _pct(top["accuracy"])]
    )
    mte = [c for c in tts["curves"] if c["strategy"] == "mte"]
    if mte:
        m = mte[-1]
        rows.append(["this run", _NAMES["mte"], str(m["budget"]), f"{m['asn']:.2f}", _pct(m["accuracy"])])
    for p in tts["baselines"]:
        method = f"{_label(p['strategy'])}{f', D = {depth}' if p['strategy'] == 'cg_mte' else ''}"
        rows.append(["this run", method, str(p["budget"]), f"{p['asn']:.2f}", _pct(p["accuracy"])])
    if "refined_bon" in entry:
        rb = entry["refined_bon"]
        rows.append(["this run", f"Refined best-of-N (N = {rb['n']})", str(rb["n"]), f"{rb['n']:.2f}",
                     _pct(rb["accuracy"])])  # fmt: skip
    for method, model, acc, budget, asn, table in PAPER_FIGURES.get(entry.get("benchmark") or "", ()):
        rows.append([f"ReTTS-PGPS paper, {table}", f"{method}: {model}", "" if budget is None else str(budget),
                     "" if asn is None else f"{asn:.2f}", f"{acc:.1f}"])  # fmt: skip
    return f"{name}: CG-MTE against SC", ["source", "method", "budget", "ASN", "accuracy (%)"], rows


def _split_tables(name: str, entry: dict[str, Any], order: Sequence[str]) -> list[Table]:
    tts = entry["tts"]
    correct = entry.get("greedy_correct", {})
    greedy = [[_TRACES.get(t, t), str(correct.get(t, "")), f"{entry['greedy'][t]:.1f}"] for t in order
              if t in entry["greedy"]]  # fmt: skip
    curve = [[_label(p["strategy"]), str(p["budget"]), f"{p['asn']:.2f}", _pct(p["accuracy"])]
             for p in [*entry["sc_sample"], *tts["curves"]]]  # fmt: skip
    depth_rows = [[str(d), str(tts["termination"].get(str(d), 0)), _pct(a)]
                  for d, a in tts["accuracy_by_depth"].items()]  # fmt: skip
    depth_rows.append(["fallback", str(tts["fallbacks"]), ""])
    c = tts["coupling"]
    out: list[Table] = [
        (f"{name}: greedy accuracy by trace type", ["trace type", "correct", "accuracy (%)"], greedy),
        (f"{name}: accuracy against samples (SC curve, standard MTE)", ["strategy", "budget", "ASN", "accuracy (%)"],
         curve),
        (f"{name}: CG-MTE termination depth", ["depth", "problems", "accuracy (%)"], depth_rows),
        (f"{name}: error coupling of the top-1 answers",
         ["pairwise same wrong (%)", ">= 3 same wrong (%)", "all same wrong (%)"],
         [[_pct(c["pairwise_same_wrong"]), _pct(c["at_least_3_same_wrong"]), _pct(c["all_same_wrong"])]]),
    ]  # fmt: skip
    if tts["trace_shares"]:
        names = sorted(next(iter(tts["trace_shares"].values())))
        out.append((f"{name}: trace-pattern shares in the unified top-k (%)", ["k", *names],
                    [[k, *(f"{100 * s[n]:.0f}" for n in names)] for k, s in tts["trace_shares"].items()]))  # fmt: skip
    best = _TRACES.get(entry["best_trace"], entry["best_trace"])
    for key, what in (("by_type", "problem type"), ("by_operator", "operator of the gold program")):
        if entry.get(key):
            rows = [
                [k, str(v["problems"]), str(v["correct"]), f"{v['accuracy']:.1f}"]
                for k, v in entry[key].items()
            ]
            out.append((f"{name}: greedy {best} accuracy by {what}", [what, "problems", "correct", "accuracy (%)"],
                        rows))  # fmt: skip
    return out


def _curve_figure(entry: dict[str, Any], depth: int, title: str, out: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=110)
    ax = fig.subplots()
    curves = [*entry["sc_sample"], *entry["tts"]["curves"]]
    for name in ("sc_sample", "sc_beam", "mte"):
        pts = [p for p in curves if p["strategy"] == name]
        if pts:
            ax.plot(
                [p["asn"] for p in pts], [100 * p["accuracy"] for p in pts], marker=".", label=_NAMES[name]
            )
    for p in entry["tts"]["baselines"]:
        if p["strategy"] != "sc_beam":
            marker = "*" if p["strategy"] == "cg_mte" else "x"
            label = f"{_label(p['strategy'])} (D = {depth})"
            ax.scatter([p["asn"]], [100 * p["accuracy"]], marker=marker, s=120, zorder=3, label=label)
    top = max([100 * p["accuracy"] for p in [*curves, *entry["tts"]["baselines"]]], default=0.0)
    ax.set_ylim(-1, max(10.0, top * 1.15))
    return _save_accuracy(
        fig, ax, f"{title}: accuracy vs average samples ({entry['problems']} problems)",
        "average samples per problem (ASN)", out,
    )  # fmt: skip


def _save_accuracy(fig: Any, ax: Any, title: str, xlabel: str, out: Path) -> Path:
    """Title, axes, grid and legend of an accuracy plot, then the file."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
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
        "fallback": decision.fallback, "correct": is_correct(decision.answer, row["gold"]), "image": False,
    }  # fmt: skip


def _model_line(model: dict[str, Any]) -> str:
    if not model:
        return "not recorded (results written by an older geo)"
    parts = [f"{model.get('name')} ({model.get('path')})"]
    if model.get("architecture"):
        parts.append(f"architecture {model['architecture']}")
    if model.get("parameters"):
        parts.append(f"{_size(int(model['parameters']))} parameters ({int(model['parameters']):,})")
    if model.get("vocab_size"):
        parts.append(f"vocabulary {int(model['vocab_size']):,} tokens")
    parts.append(f"backend {model.get('backend', '?')}")
    if model.get("base_model"):
        parts.append(f"trained by this pipeline from {model['base_model']}")
    return "; ".join(parts)


def _setting_line(setting: str) -> str:
    if setting == "clauses":
        return ("clauses given: the ground-truth-diagram setting. The diagram's structural and semantic clauses "
                "are stated in the prompt before the question and no image is sent, as when Inter-GPS or PGPSNet "
                "are given ground-truth diagram parses.")  # fmt: skip
    return "image: the diagram image is in the prompt (a PA-trained model states its clauses, then reasons)."


def _expectation(model: dict[str, Any], steps: int | None) -> str:
    kind, base = model.get("kind"), str(model.get("base_model") or "")
    params = int(model.get("parameters") or 0)
    if kind == "tiny":
        return (f"UNTRAINED MODEL. {model.get('name')} is a tiny model with random weights, built at run time and "
                "never trained: its candidates are noise, so every accuracy is expected to be 0. The run checks "
                "that every stage works; it says nothing about the method.")  # fmt: skip
    if kind == "trained" and base.startswith("tiny:"):
        trained = f" for {steps} optimizer steps" if steps is not None else ""
        return (f"NEARLY UNTRAINED MODEL. The policy is a tiny model that started from random weights ({base}) and "
                f"was trained by this pipeline{trained}; it is far too small and too briefly trained to solve "
                "problems, so accuracies at or near 0 are expected. The run checks that every stage works.")  # fmt: skip
    small = 0 < params < 50_000_000 or base.startswith("scratch:")
    if small:
        return ("A small model that learned only from geo's synthetic problems. Expect the synthetic held-out "
                "split, drawn from the same generator as the training problems, to score well above the public "
                "benchmark splits, whose problems were written by people with other wording and figures: the "
                "gap between them measures how far the training transfers. The ReTTS-PGPS figures shown for "
                "comparison come from pretrained 2B-8B vision-language models and are a reference point, not a "
                "target for a model of this size.")  # fmt: skip
    return ("Compare each split's CG-MTE with SC at the largest budget: the ReTTS-PGPS paper (Table 5) finds "
            "CG-MTE about as accurate as SC with 40 beam candidates while reading about 5 candidates per problem.")  # fmt: skip


def _summary_rows(summary: dict[str, Any]) -> list[list[str]]:
    """A stage summary as (what, value) rows, one level of nesting flattened."""
    rows: list[list[str]] = []
    for key, value in summary.items():
        if isinstance(value, dict):
            rows += [[f"{key}: {k}", _fmt(v)] for k, v in value.items() if not isinstance(v, dict | list)]
        elif not isinstance(value, list):
            rows.append([key, _fmt(value)])
    return rows


def _html_table(t: Table) -> str:
    title, header, rows = t
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td{' class=n' if _numeric(c) else ''}>{html.escape(c)}</td>" for c in r) + "</tr>"
        for r in rows
    )
    return (
        f"<h3>{html.escape(title)}</h3>\n<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"
    )


def _numeric(cell: str) -> bool:
    try:
        float(cell.rstrip("%"))
    except ValueError:
        return cell == ""
    return True


def _md_table(t: Table) -> str:
    title, header, rows = t
    align = ["---:" if rows and all(_numeric(r[i]) for r in rows) else "---" for i in range(len(header))]
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
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
        f'<div class="card"><h4>{html.escape(ex["id"])}</h4>{img}<p class="q">{html.escape(ex["question"])}</p>'
        f"{traces}<p><b>Votes:</b> {votes or 'none'}</p><p><b>Decision:</b> {html.escape(_fmt(ex['answer']))} "
        f'({how}); gold {ex["gold"]:g}: <span class="{verdict}">{verdict}</span></p></div>'
    )


def _md_example(ex: dict[str, Any]) -> str:
    lines = [f"#### {ex['id']}", ""]
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


def _html(block: Block) -> str:
    kind, value = block
    if kind in ("h2", "h3"):
        return f"<{kind}>{html.escape(value)}</{kind}>"
    if kind == "p":
        return f"<p>{html.escape(value)}</p>"
    if kind == "table":
        return _html_table(value)
    if kind == "banner":
        items = "".join(f"<p><b>{html.escape(k)}:</b> {html.escape(v)}</p>" for k, v in value)
        return f'<div class="banner">{items}</div>'
    if kind == "glossary":
        items = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in value)
        return f"<h2>Glossary</h2><dl>{items}</dl>"
    if kind == "figures":
        return "".join(
            f'<figure><img src="figures/{n}" alt="{html.escape(c)}"><figcaption>{html.escape(c)}</figcaption></figure>'
            for n, c in value
        )
    if kind == "critiques":
        return "<div class='gallery'>" + "".join(_critique_card(e, False) for e in value) + "</div>"
    return "<div class='gallery'>" + "".join(_html_example(e) for e in value) + "</div>"


def _md(block: Block) -> str:
    kind, value = block
    if kind == "h2":
        return f"## {value}\n"
    if kind == "h3":
        return f"### {value}\n"
    if kind == "p":
        return f"{value}\n"
    if kind == "table":
        return _md_table(value)
    if kind == "banner":
        return "\n".join(f"> **{k}:** {v}\n>" for k, v in value).rstrip(">") + "\n"
    if kind == "glossary":
        return "## Glossary\n\n" + "\n".join(f"* **{k}**: {v}" for k, v in value) + "\n"
    if kind == "figures":
        return "".join(f"![{c}](figures/{n})\n\n" for n, c in value)
    if kind == "critiques":
        return "\n".join(_critique_card(e, True) for e in value)
    return "\n".join(_md_example(e) for e in value)


_CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.n{text-align:right}figure{display:inline-block;margin:.5em}
figure img{max-width:520px}.banner{border:2px solid #888;border-radius:6px;padding:4px 12px;background:#f7f7f2}
dt{font-weight:bold;margin-top:.4em}.gallery{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #ccc;border-radius:6px;padding:8px;width:500px}
.card img{max-width:240px}pre{white-space:pre-wrap;font-size:11px;background:#f6f6f6;padding:4px}
.correct{color:#080}.wrong{color:#b00}"""


_PRM_NAMES = {
    "greedy": "greedy program", "sc": "SC (majority of N)", "random": "random choice (mean of single samples)",
    "bon_mean": "best-of-N, mean step score", "bon_min": "best-of-N, min step score",
    "bon_max": "best-of-N, max step score", "refined_bon": "refined best-of-N (N/2 samples + N/2 refined)",
}  # fmt: skip

PRM_PAPER = (
    "The GM-PRM paper's figures (not from this run): its critic is Qwen2.5-VL-7B fine-tuned on 19,614 GPT-4o "
    "critiques; at N = 8 refined best-of-N lifts its policies' accuracy by 1.3 to 12.4 points per benchmark "
    "over single samples (2.9 to 5.9 points on average over five benchmarks; its Table 1). The run here is "
    "a 2.8M-parameter text-only critic judging a 2.8M policy's program traces, clauses given."
)


def _prm_figure(curves: Sequence[dict[str, Any]], split: str, out: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=110)
    ax = fig.subplots()
    for strategy, label in _PRM_NAMES.items():
        pts = sorted(
            (c["n"], c["accuracy"]) for c in curves if c["split"] == split and c["strategy"] == strategy
        )
        if strategy == "greedy" and pts:
            ax.axhline(pts[0][1], linestyle=":", color="grey", label=label)
        elif pts:
            ax.plot([n for n, _ in pts], [a for _, a in pts], marker=".", label=label)
    ax.set_xscale("log", base=2)
    return _save_accuracy(
        fig, ax, f"{split}: accuracy vs N (process reward model)", "N (solutions per problem)", out
    )


def _prm_blocks(prm: dict[str, Any], figures: Path) -> list[Block]:
    """The process reward model's section: curves per split, step F1, corrections, the critique gallery."""
    blocks: list[Block] = [
        ("h2", "Process reward model"),
        ("p", "N program traces per problem are judged step by step (one operator per step) by the critic; "
              "best-of-N keeps the solution with the best aggregated step score among those judged correct at "
              "every step; refined best-of-N also continues each of the first N/2 from its verified steps plus "
              "the critic's correction and chooses among all N (GM-PRM's rule). The rows marked 'answered only' first "
              "leave out the candidates from which no answer was extracted, as SC leaves out their votes (not the "
              "paper's rule). Step F1 is the mean of the F1 of correct and "
              "of wrong steps against the labels of the realised figure (the VisualProcessBench measure)."),
        ("p", PRM_PAPER),
    ]  # fmt: skip
    ns: list[int] = prm.get("ns") or []
    for split, entry in prm.get("splits", {}).items():
        curves = entry.get("curves", [])
        answered = entry.get("answered_curves", [])

        def row(rows: Sequence[dict[str, Any]], strategy: str, label: str) -> list[str]:
            return [label, *(next((f"{c['accuracy']:.1f}" for c in rows if c["strategy"] == strategy and c["n"] == n), "")
                             for n in ns)]  # fmt: skip

        table = [
            row(curves, s, label)
            for s, label in _PRM_NAMES.items()
            if any(c["strategy"] == s for c in curves)
        ]
        table += [row(answered, s, f"{label}, answered only") for s, label in _PRM_NAMES.items()
                  if any(c["strategy"] == s for c in answered)]  # fmt: skip
        name = f"{split}_prm_accuracy_vs_n.png"
        _prm_figure(curves, split, figures / name)
        blocks += [("h3", f"{split}: {entry['problems']} problems"),
                   ("table", (f"{split}: accuracy (%) by N", ["strategy", *(f"N = {n}" for n in ns)], table)),
                   ("figures", [(name, f"{split}: accuracy vs N")])]  # fmt: skip
        f1 = entry.get("step_f1")
        if f1:
            c = entry.get("corrections", {})
            blocks += [("table", (f"{split}: the critic against the figure labels", ["what", "value"], [
                ["policy samples judged", str(f1["solutions"])], ["steps compared", str(f1["steps"])],
                ["macro step F1", f"{f1['macro_f1']:.3f}"], ["F1 correct / wrong", f"{f1['f1_correct']:.3f} / {f1['f1_incorrect']:.3f}"],
                ["first wrong step found", f"{f1['first_wrong_found']} of {f1['with_error']}"],
                ["all-correct solutions passed", f"{f1['all_correct_found']} of {f1['without_error']}"],
                ["corrections correct on the figure", f"{c.get('correct', 0)} of {c.get('written', 0)}"],
            ]))]  # fmt: skip
        if entry.get("gallery"):
            blocks += [("h3", f"{split}: critiques with a correction"), ("critiques", entry["gallery"])]
    return blocks


def _critique_card(ex: dict[str, Any], markdown: bool) -> str:
    ok = "correct" if ex["correction_correct"] else "wrong"
    truth = "none" if ex["true_first_wrong"] is None else f"step {ex['true_first_wrong'] + 1}"
    head = (f"Problem {ex['problem']}: the critic flags step {ex['first_wrong'] + 1} (the figure's first wrong step: "
            f"{truth}); its correction {ex['correction']!r} is {ok} on the figure.")  # fmt: skip
    if markdown:
        return "\n".join([f"**{head}**", "", "```", ex["solution"] or "", "```", "", "```",
                          ex["critique"] or "(critique not recorded)", "```", ""])  # fmt: skip
    return (f"<div class='card'><p>{html.escape(head)}</p><pre>{html.escape(ex['solution'] or '')}</pre>"
            f"<pre>{html.escape(ex['critique'] or '(critique not recorded)')}</pre></div>")  # fmt: skip


def _summary(folder: Path | None) -> dict[str, Any] | None:
    state = read_state(folder) if folder is not None else None
    return state.summary if state is not None and state.status == "done" else None


def build_report(
    evaluate_dir: Path,
    out: Path,
    *,
    title: str,
    gallery: int,
    train_dir: Path | None = None,
    images_dir: Path | None = None,
    mts_dir: Path | None = None,
    data_dir: Path | None = None,
) -> list[Path]:
    """Write ``index.html`` and ``report.md`` (with ``figures/`` and ``gallery/``) into ``out``.

    Args:
        evaluate_dir: The evaluate stage's folder (``results.json``; each split's ``candidates.jsonl`` and ``tts/``).
        out: The report folder.
        title: Page title.
        gallery: How many examples the gallery shows per split.
        train_dir: The train stage's folder, for the loss curve (None: no training section).
        images_dir: Where the problems' diagrams are (None: the gallery has no images).
        mts_dir: The mts stage's folder, for its statistics (None: no MTS section).
        data_dir: The data stage's folder, for the training split's size (None: not shown).

    Returns:
        The two pages.
    """
    res = json.loads((evaluate_dir / "results.json").read_text(encoding="utf-8"))
    splits: dict[str, dict[str, Any]] = res.get("splits") or _legacy_splits(res)
    order: list[str] = res["order"]
    depth: int = res["depth"]
    model: dict[str, Any] = res.get("model") or {}
    figures, pictures = out / "figures", out / "gallery"
    figures.mkdir(parents=True, exist_ok=True)
    pictures.mkdir(exist_ok=True)
    train, mts, data = _summary(train_dir), _summary(mts_dir), _summary(data_dir)
    steps = int(train["global_step"]) if train and "global_step" in train else None

    sizes = ", ".join(f"{n} ({e['problems']} problems{'; ' + e['source'] if e.get('source') else ''})"
                      for n, e in splits.items())  # fmt: skip
    train_size = (data or {}).get("train", {}).get("records")
    data_line = (f"training split: {train_size} problems; " if train_size else "") + f"evaluated on {sizes}"
    budgets = f"{', '.join(_TRACES.get(t, t) for t in order)}; D = {depth} (budgets 1..{len(order) * depth})"
    blocks: list[Block] = [
        ("banner", [
            ("Model", _model_line(model)),
            ("Data", data_line),
            ("Setting", _setting_line(str(model.get("setting", "image")))),
            ("Candidates", f"trace types {budgets}; {sum(e.get('tokens', 0) for e in splits.values())} tokens generated"),
            ("What to expect", _expectation(model, steps)),
        ]),
        ("glossary", _GLOSSARY),
    ]  # fmt: skip
    if mts:
        blocks += [("h2", "Multi-trace synthesis (MTS)"),
                   ("p", "What the mts stage made of the training split (its summary)."),
                   ("table", ("MTS statistics", ["what", "value"], _summary_rows(mts)))]  # fmt: skip
    if train and train.get("losses"):
        _loss_figure(train["losses"], figures / "training_loss.png")
        final = train.get("final_loss")
        blocks += [("h2", "Training"),
                   ("p", f"{train.get('global_step')} optimizer steps; final loss {_fmt(final)}."),
                   ("figures", [("training_loss.png", f"Training loss ({train.get('global_step')} steps)")])]  # fmt: skip
    for name, entry in splits.items():
        folder = evaluate_dir / entry.get("folder", ".")
        shown = [
            (
                f"{name}_accuracy_vs_samples.png",
                f"{name}: accuracy vs samples (SC, MTE) with the CG-MTE point",
            )
        ]
        _curve_figure(entry, depth, name, figures / shown[0][0])
        for file, caption in _TTS_FIGURES:
            if (folder / "tts" / file).is_file():
                shutil.copy2(folder / "tts" / file, figures / f"{name}_{file}")
                shown.append((f"{name}_{file}", f"{name}: {caption}"))
        bench = entry.get("benchmark")
        about = f"{entry['problems']} problems" + (f" from {entry['source']}" if entry.get("source") else "")
        about += f" (a sample of the {bench} test split)" if bench else ""
        tables = _split_tables(name, entry, order)
        blocks += [("h2", f"Split {name}"), ("p", about + "."), ("table", tables[0]),
                   ("table", _main_table(name, entry, depth)), ("figures", shown),
                   *(("table", t) for t in tables[1:])]  # fmt: skip
        rows = _rows(folder / "candidates.jsonl")
        examples = [_example(r, order, depth) for r in rows if "texts" in r][:gallery]
        for ex in examples:
            source = images_dir / ex["diagram"] if images_dir is not None and ex["diagram"] else None
            ex["image"] = source is not None and source.is_file()
            if source is not None and ex["image"]:
                shutil.copy2(source, pictures / ex["diagram"])
        if examples:
            blocks += [("h3", f"{name}: examples"), ("gallery", examples)]
    if res.get("prm"):
        blocks += _prm_blocks(res["prm"], figures)
    paper = [[bench, method, model_name, "" if budget is None else str(budget), "" if asn is None else f"{asn:.2f}",
              f"{acc:.1f}", table]
             for bench, quoted in PAPER_FIGURES.items() for method, model_name, acc, budget, asn, table in quoted]  # fmt: skip
    blocks += [
        ("h2", "The ReTTS-PGPS paper's figures (not from this run)"),
        ("p", "Quoted from the ReTTS-PGPS paper for reference: its models are vision-language models (2B to 8B "
              "parameters, pretrained, then PA-trained on the full MTS-All training sets) that see the diagram "
              "image; it reports CG-MTE on PGPS9K only. Inter-GPS is a neural-symbolic solver given ground-truth "
              "diagram parses, the setting closest to clauses given."),
        ("table", ("ReTTS-PGPS paper",
                   ["benchmark", "method", "model", "budget", "ASN", "accuracy (%)", "paper table"], paper)),
    ]  # fmt: skip
    page = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
            *(_html(b) for b in blocks), "</body></html>"]  # fmt: skip
    md = [f"# {title}", "", *(_md(b) for b in blocks)]
    atomic_write_text(out / "index.html", "\n".join(page) + "\n")
    atomic_write_text(out / "report.md", "\n".join(md) + "\n")
    return [out / "index.html", out / "report.md"]


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def run_report(ctx: StageContext) -> dict[str, Any]:
    """The report stage."""
    cfg = ctx.config
    train = ctx.workdir / "train" if cfg.train is not None and cfg.train.enabled else None
    mts = ctx.workdir / "mts" if cfg.mts.enabled and cfg.data.train is not None else None
    pages = build_report(
        ctx.workdir / "evaluate", ctx.folder, title=cfg.report.title or f"geo pipeline report: {cfg.name}",
        gallery=cfg.report.gallery, train_dir=train, images_dir=ctx.workdir / "data" / "images", mts_dir=mts,
        data_dir=ctx.workdir / "data",
    )  # fmt: skip
    return {"html": str(pages[0]), "markdown": str(pages[1])}
