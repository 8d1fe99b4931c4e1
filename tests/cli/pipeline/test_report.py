"""The report: tables and figures from recorded candidates, a gallery, and a render in headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from geo_cli.pipeline import EvaluateSettings, build_report
from geo_cli.pipeline._diagram import draw_schematic
from geo_cli.pipeline._stage_evaluate import CANDIDATES, score_split, split_folder, write_results
from geo_cli.pipeline._state import StageState, write_state

pytest.importorskip("matplotlib", reason="the report's figures need matplotlib (geotts[report])")
ORDER = ("program", "pal", "cot_program", "cot_pal")


def _row(i: int) -> dict[str, Any]:
    """Problem i: gold i + 1; the program and PAL traces agree on it for even i, all disagree for odd i."""
    gold = float(i + 1)
    agree = i % 2 == 0
    traces = {
        "program": [gold if agree else 50.0 + i, gold],
        "pal": [gold if agree else 60.0 + i, None],
        "cot_program": [70.0 + i, gold],
        "cot_pal": [80.0 + i, 90.0 + i],
    }
    unified = [gold, 70.0 + i, gold, None, 5.0, gold, 1.0, 2.0]
    return {
        "id": f"prob_{i}", "gold": gold, "question": f"Find x in problem {i}.", "diagram": f"img_{i}.png",
        "greedy": {t: traces[t][0] for t in ORDER}, "traces": traces, "sc_sample": unified[::-1],
        "unified": unified, "unified_patterns": ["program", "pal", "cot_pal", "other"] * 2, "tokens": 100,
        "texts": {t: f"{t} trace of problem {i} <b>not html</b>" for t in ORDER},
    }  # fmt: skip


MODEL = {"name": "tiny:causal_lm", "kind": "tiny", "path": "/m", "parameters": 123456, "architecture": "qwen2",
         "vocab_size": 384, "setting": "clauses", "backend": "transformers", "base_model": None}  # fmt: skip


def _evaluate_folder(tmp_path: Path, model: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """Two splits scored: ``test`` (6 problems, a PGPS9K sample) and ``heldout`` (its first 4 problems)."""
    folder, images = tmp_path / "evaluate", tmp_path / "images"
    folder.mkdir()
    rows = [_row(i) for i in range(6)]
    settings = EvaluateSettings(depth=2, order=ORDER)
    entries: dict[str, dict[str, Any]] = {}
    for name, chosen, bench in (("test", rows, "PGPS9K"), ("heldout", rows[:4], None)):
        where = split_folder(folder, name, primary=name == "test")
        where.mkdir(parents=True, exist_ok=True)
        (where / CANDIDATES).write_text("".join(json.dumps(r) + "\n" for r in chosen))
        rel = str(where.relative_to(folder)) if name != "test" else "."
        entries[name] = score_split(
            chosen, settings, where, {}, where=rel, source=f"{name} rows", benchmark=bench
        )
    summary = write_results(folder, entries, settings, model or MODEL)
    assert summary["problems"] == 6 and summary["splits"]["heldout"]["problems"] == 4
    for i in range(2):
        draw_schematic(
            ["line A B C", "line C D", "\\odot O lieson A D"], ["AB = 3", "CD = x"], images / f"img_{i}.png"
        )
    return folder, images


def test_report_has_the_tables_figures_and_gallery(tmp_path: Path) -> None:
    folder, images = _evaluate_folder(tmp_path)
    html, md = build_report(folder, tmp_path / "report", title="Test report", gallery=2, images_dir=images)
    page = html.read_text()
    results = json.loads((folder / "results.json").read_text())
    # even problems: program and PAL agree on gold at depth 1; odd ones tie at depth 1 and agree on gold at 2
    cg = next(p for p in results["tts"]["baselines"] if p["strategy"] == "cg_mte")
    assert cg["accuracy"] == 1.0 and cg["asn"] == 6.0
    assert results["tts"]["termination"] == {"1": 3, "2": 3}
    mte_at_1 = next(p for p in results["tts"]["curves"] if p["strategy"] == "mte" and p["budget"] == 4)
    assert (
        mte_at_1["accuracy"] == 0.5
    )  # a tie at depth 1 goes to the first answer read: wrong for odd problems
    assert results["greedy"]["program"] == 0.5 and results["greedy"]["cot_pal"] == 0.0  # fractions
    assert results["splits"]["test"]["greedy"]["program"] == 50.0  # percent
    assert results["splits"]["heldout"]["greedy"]["program"] == 50.0  # problems 0 and 2 of 0..3
    assert [p["budget"] for p in results["sc_sample"]] == list(range(1, 9))
    text = md.read_text()
    for split in ("test", "heldout"):
        for heading in ("CG-MTE against SC", "accuracy against samples", "CG-MTE termination depth",
                        "error coupling", "greedy accuracy by trace type"):  # fmt: skip
            assert f"{split}: {heading}" in page and f"{split}: {heading}" in text
    figures = re.findall(r'src="(figures/[^"]+)"', page)
    for name in (
        "test_accuracy_vs_samples.png",
        "heldout_accuracy_vs_samples.png",
        "test_termination_depth.png",
    ):
        assert f"figures/{name}" in figures
    assert all((html.parent / f).is_file() for f in figures)
    assert page.count('class="card"') == 4 and "gallery/img_0.png" in page  # two examples per split
    assert "&lt;b&gt;not html&lt;/b&gt;" in page  # candidate text is escaped
    assert "Decision:" in page and "consensus at depth 1" in page and "consensus at depth 2" in page


def test_report_explains_the_run_and_quotes_the_paper_as_the_paper(tmp_path: Path) -> None:
    folder, images = _evaluate_folder(tmp_path)
    mts, data = tmp_path / "mts", tmp_path / "data"
    write_state(mts, StageState(key="k", status="done", inputs={},
                                summary={"problems": 100, "traces": {"program": 100, "pal": 97}, "pal_failed": 3}))  # fmt: skip
    write_state(data, StageState(key="k", status="done", inputs={}, summary={"train": {"records": 100}}))
    html, md = build_report(folder, tmp_path / "report", title="T", gallery=0, images_dir=images, mts_dir=mts,
                            data_dir=data)  # fmt: skip
    for text in (html.read_text(), md.read_text()):
        assert "UNTRAINED MODEL" in text and "random weights" in text  # tiny: said plainly
        assert "123.5k parameters" in text and "qwen2" in text and "vocabulary 384 tokens" in text
        assert "clauses given: the ground-truth-diagram setting" in text
        assert (
            "training split: 100 problems" in text
            and "test (6 problems" in text
            and "heldout (4 problems" in text
        )
        assert "Glossary" in text and "Average samples needed per problem" in text and "Fallback" in text
        assert "MTS statistics" in text and "traces: pal" in text
        assert "greedy Program accuracy by problem type" in text
        assert "ReTTS-PGPS paper" in text and "figures (not from this run)" in text
    page = html.read_text()
    # beside the PGPS9K sample's own rows (CG-MTE of this run), the paper's Table 5 figure, marked as such
    test_table = page[page.index("test: CG-MTE against SC") : page.index("heldout: greedy accuracy")]
    assert "ReTTS-PGPS paper, Table 5" in test_table and "76.0" in test_table and "4.89" in test_table
    heldout = page[page.index("heldout: CG-MTE against SC") :]
    assert "ReTTS-PGPS paper, Table" not in heldout[: heldout.index("</table>")]  # no benchmark: none quoted


def test_a_trained_model_is_not_called_untrained(tmp_path: Path) -> None:
    model = {
        **MODEL,
        "name": "bundled:cpu/model",
        "kind": "bundled",
        "parameters": 2_800_000,
        "setting": "image",
    }
    folder, _ = _evaluate_folder(tmp_path, model)
    _, md = build_report(folder, tmp_path / "report", title="T", gallery=0)
    text = md.read_text()
    assert "UNTRAINED" not in text and "2.8M parameters" in text and "how far the training transfers" in text
    assert "image: the diagram image is in the prompt" in text


_PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.setAttribute('data-images', imgs.length + '/' + ok);
});
</script></body>"""


def test_report_renders_in_headless_chromium_with_its_images(tmp_path: Path, chromium: str) -> None:
    folder, images = _evaluate_folder(tmp_path)
    html, _ = build_report(folder, tmp_path / "report", title="Test report", gallery=2, images_dir=images)
    probe = html.with_name("probe.html")
    probe.write_text(html.read_text().replace("</body>", _PROBE))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    dom = subprocess.run([chromium, *flags, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    found = re.search(r'data-images="(\d+)/(\d+)"', dom)
    assert found is not None, dom[-500:]
    total, loaded = int(found.group(1)), int(found.group(2))
    assert total >= 6 and loaded == total
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, *flags, "--window-size=1200,900", f"--screenshot={shot}", html.as_uri()],
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
