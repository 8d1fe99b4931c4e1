"""Two ways to label solution steps, side by side: exact figure labels against Monte Carlo hard estimation.

GM-PRM labels steps by Monte Carlo hard estimation (step i is correct when at least one of m
continuations of steps 1..i reaches the answer; with the policy as completer). A synthetic problem
carries its realised figure, so its steps can also be labelled exactly (``geosynth.synth.
figure_step_labels``; ``geo prm figure-data``). This bench labels the same policy solutions both ways
and prints how often they agree, step by step and on each solution's first wrong step.

The solutions are the policy samples a ``cpu-prm`` run recorded (``evaluate/prm_runs.jsonl``, program
traces in the critic's layout) and the figures those the data stage kept for the split
(``data/synth/<split>/pgps/pgps.json``). The completer is the policy, asked with its own PA program prompt
and continuing each prefix in its one-line program form (``geoprm.programs.ProgramLayoutSampler``);
every continuation is executed by geodsl. Only finished solutions (with a ``Get`` step) are compared.

Usage:
    uv run python bench/bench_mc_vs_figure.py --runs runs/cpu-prm/evaluate/prm_runs.jsonl \
        --figured runs/cpu-prm/data/synth/heldout/pgps/pgps.json \
        --policy apps/cli/src/geo_cli/bundled/pgps-cpu-v1/model [--per-problem 4] [--m 8] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=Path, required=True, help="an evaluate stage's prm_runs.jsonl")
    parser.add_argument(
        "--figured", type=Path, required=True, help="PGPS file with the split's realised figures"
    )
    parser.add_argument("--policy", required=True, help="the policy model folder (the completer)")
    parser.add_argument("--per-problem", type=int, default=4, help="policy samples compared per problem")
    parser.add_argument("--m", type=int, default=8, help="continuations per step prefix")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=16, help="requests decoded together")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args()


def main() -> None:
    args = _args()
    for path in (args.runs, args.figured):
        if not path.is_file():
            sys.exit(f"error: {path} does not exist")
    import torch

    torch.set_num_threads(1)
    from geo_cli import _figure_prm as fp
    from geodsl.traces import candidate_answer
    from geoprm.data import MonteCarlo, PRMItem, mc_hard_labels
    from geoprm.programs import ProgramLayoutSampler
    from geosynth.synth import StepLabelError, load_figured
    from geotts import Completion, Problem, SamplingParams, split_steps
    from geotts.backends.transformers import TransformersSampler

    figures = {p.record.id: p for p in load_figured(args.figured) if p.figure is not None}
    lay = fp.layout()
    items: list[tuple[PRMItem, Sequence[str]]] = []
    truth: list[list[bool]] = []
    numbers: dict[str, Sequence[str]] = {}
    unlabelled = 0
    for line in args.runs.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        problem = figures.get(row["id"])
        if problem is None:
            continue
        numbers[row["id"]] = problem.record.numbers
        for i, cand in enumerate(row["run"]["sampled"][: args.per_problem]):
            steps = split_steps(cand["text"] or "").steps
            if not steps or not any(s.split()[0] == "Get" for s in steps):
                continue
            try:
                labels = [s.correct for s in fp.label_steps(problem, steps)]
            except StepLabelError:
                unlabelled += 1
                continue
            item = PRMItem(id=f"{row['id']}/s{i}", question=row["question"], solution=cand["text"],
                           answer=problem.record.answer_value, source=row["id"])  # fmt: skip
            items.append((item, steps))
            truth.append(labels)
    if not items:
        sys.exit("error: no finished policy sample with a figure to compare")

    def extract(completion: Completion, trace_type: str | None, problem: Problem) -> Hashable | None:
        source = str(problem.metadata.get("source", ""))
        return candidate_answer(completion.text, "program", numbers=numbers.get(source, ()))

    sampler = TransformersSampler.from_pretrained(args.policy, device="cpu", batch_size=args.batch)
    completer = ProgramLayoutSampler(sampler, lay)
    mc = MonteCarlo(
        completions=args.m, params=SamplingParams(temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed)
    )  # fmt: skip
    start = time.perf_counter()
    estimated = mc_hard_labels(
        items, completer, lay.extractor(extract), settings=mc, prompt=lambda item: item.question,
        prefix=lambda steps: lay.render(f"{fp.HEADER}\n{' '.join(steps)}") + "\n",
    )  # fmt: skip
    seconds = time.perf_counter() - start

    both_right = both_wrong = fig_right_mc_wrong = fig_wrong_mc_right = 0
    upto = {"agree": 0, "steps": 0}
    first_agree = solutions_agree = 0
    for fig, mcl in zip(truth, estimated, strict=True):
        for f, m in zip(fig, mcl, strict=True):
            both_right += f and m
            both_wrong += (not f) and (not m)
            fig_right_mc_wrong += f and not m
            fig_wrong_mc_right += (not f) and m
        first_fig = next((k for k, f in enumerate(fig) if not f), None)
        first_mc = next((k for k, m in enumerate(mcl) if not m), None)
        first_agree += first_fig == first_mc
        solutions_agree += all(fig) == all(mcl)
        cut = len(fig) if first_fig is None else first_fig + 1
        upto["steps"] += cut
        upto["agree"] += sum(f == m for f, m in zip(fig[:cut], mcl[:cut], strict=True))
    steps = both_right + both_wrong + fig_right_mc_wrong + fig_wrong_mc_right
    agree = both_right + both_wrong
    p_fig = (both_right + fig_right_mc_wrong) / steps
    p_mc = (both_right + fig_wrong_mc_right) / steps
    chance = p_fig * p_mc + (1 - p_fig) * (1 - p_mc)
    kappa = (agree / steps - chance) / (1 - chance) if chance < 1 else 1.0
    out: dict[str, Any] = {
        "solutions": len(items), "steps": steps, "unlabelled": unlabelled, "m": args.m,
        "step_agreement": agree / steps, "cohen_kappa": kappa,
        "figure_correct_mc_correct": both_right, "figure_wrong_mc_wrong": both_wrong,
        "figure_correct_mc_wrong": fig_right_mc_wrong, "figure_wrong_mc_correct": fig_wrong_mc_right,
        "agreement_up_to_first_wrong": upto["agree"] / upto["steps"], "steps_up_to_first_wrong": upto["steps"],
        "first_wrong_step_agrees": first_agree / len(items), "all_correct_agrees": solutions_agree / len(items),
        "seconds": round(seconds, 1),
    }  # fmt: skip
    print(f"{len(items)} finished policy samples, {steps} steps, m = {args.m} continuations per prefix "
          f"({seconds:.0f} s of completions)")  # fmt: skip
    print("| | Monte Carlo: correct | Monte Carlo: wrong |")
    print("|---|---:|---:|")
    print(f"| figure: correct | {both_right} | {fig_right_mc_wrong} |")
    print(f"| figure: wrong | {fig_wrong_mc_right} | {both_wrong} |")
    print(f"step agreement {100 * agree / steps:.1f}% (Cohen's kappa {kappa:.2f}); up to each solution's first "
          f"wrong step (figure) {100 * out['agreement_up_to_first_wrong']:.1f}%; same first wrong step "
          f"{100 * out['first_wrong_step_agrees']:.1f}%; same all-correct verdict {100 * out['all_correct_agrees']:.1f}%")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
