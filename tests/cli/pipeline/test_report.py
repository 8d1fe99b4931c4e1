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
from geo_cli.pipeline._stage_evaluate import CANDIDATES, score_candidates

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


def _evaluate_folder(tmp_path: Path) -> tuple[Path, Path]:
    folder, images = tmp_path / "evaluate", tmp_path / "images"
    folder.mkdir()
    rows = [_row(i) for i in range(6)]
    (folder / CANDIDATES).write_text("".join(json.dumps(r) + "\n" for r in rows))
    settings = EvaluateSettings(depth=2, order=ORDER)
    summary = score_candidates(rows, settings, folder, {})
    assert summary["problems"] == 6
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
    assert results["greedy"]["program"] == 0.5 and results["greedy"]["cot_pal"] == 0.0
    assert [p["budget"] for p in results["sc_sample"]] == list(range(1, 9))
    for heading in ("Main results", "Accuracy vs samples", "CG-MTE termination depth", "Error coupling"):
        assert heading in page and heading in md.read_text()
    figures = re.findall(r'src="(figures/[^"]+)"', page)
    assert "figures/accuracy_vs_samples.png" in figures and "figures/termination_depth.png" in figures
    assert all((html.parent / f).is_file() for f in figures)
    assert page.count('class="card"') == 2 and "gallery/img_0.png" in page
    assert "&lt;b&gt;not html&lt;/b&gt;" in page  # candidate text is escaped
    assert "Decision:" in page and "consensus at depth 1" in page and "consensus at depth 2" in page


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
