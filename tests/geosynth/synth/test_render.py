from __future__ import annotations

import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from geosynth import ConstructionDef, Problem, default_definitions, load_problems, parse_problem, realise
from geosynth.engine import Diagram
from geosynth.synth._render import (
    DrawSpec,
    Layout,
    RenderError,
    diagram_layout,
    drawing_table,
    render_diagram,
    statement_segments,
)

DATA = Path(__file__).resolve().parents[1] / "data"
FOOT = "a b c = triangle a b c; h = foot h a b c; m = midpoint m a b; o = circle o a b c"


def _figure(line: str, seed: int = 0) -> tuple[Problem, Diagram]:
    problem = parse_problem(line, "sample")
    return problem, realise(problem, np.random.default_rng(seed), 200, check_goal=problem.goal is not None)


@pytest.fixture(scope="module")
def samples() -> list[tuple[Problem, Diagram]]:
    problems = (
        load_problems(DATA / "jgex_sample.txt")[:10] + load_problems(DATA / "constructions_sample.txt")[:10]
    )
    return [(p, realise(p, np.random.default_rng(3), 200, check_goal=True)) for p in problems]


def test_every_construction_has_a_drawing_entry_naming_its_arguments() -> None:
    table = drawing_table()
    definitions = default_definitions()
    assert set(definitions) <= set(table)
    for name, spec in table.items():
        args = set(definitions[name].args)
        named = {p for seg in spec.segments for p in seg} | {p for c in spec.circles for p in c}
        named |= {p for r in spec.right for p in r}
        assert named <= args, f"{name} draws {named - args}, which are not its arguments"


def test_png_and_svg_files_are_written(tmp_path: Path) -> None:
    problem, diagram = _figure(FOOT)
    png = render_diagram(problem, diagram, tmp_path / "out" / "f.png")
    svg = render_diagram(problem, diagram, tmp_path / "out" / "f.svg", fmt="svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.fromstring(svg.read_bytes())
    assert root.tag.endswith("svg")
    texts = {"".join(t.itertext()).strip() for t in root.iter() if t.tag.endswith("text")}
    assert {"A", "B", "C", "H", "M", "O"} <= texts


def test_same_seed_gives_identical_files_and_the_svg_salt_follows_the_seed(tmp_path: Path) -> None:
    problem, diagram = _figure(FOOT)
    for fmt in ("png", "svg"):
        first = render_diagram(problem, diagram, tmp_path / f"a.{fmt}", fmt=fmt, seed=5).read_bytes()
        second = render_diagram(problem, diagram, tmp_path / f"b.{fmt}", fmt=fmt, seed=5).read_bytes()
        assert first == second
    other = render_diagram(problem, diagram, tmp_path / "c.svg", fmt="svg", seed=6).read_bytes()
    assert b"Date" not in other and b"matplotlib v" not in other
    assert diagram_layout(problem, diagram, seed=5) == diagram_layout(problem, diagram, seed=5)


def _overlap(a: Sequence[float], b: Sequence[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_labels_do_not_overlap_each_other_or_other_points(samples: list[tuple[Problem, Diagram]]) -> None:
    for problem, diagram in samples:
        layout = diagram_layout(problem, diagram)
        assert [label.point for label in layout.labels] == list(problem.points)
        for i, label in enumerate(layout.labels):
            for other in layout.labels[i + 1 :]:
                assert not label.overlaps(other), f"{problem.name}: {label.text} overlaps {other.text}"
            for name, at in layout.points.items():
                if name != label.point:
                    assert not label.contains(at), f"{problem.name}: label {label.text} covers point {name}"


def test_drawn_text_extents_do_not_overlap(samples: list[tuple[Problem, Diagram]]) -> None:
    """The label boxes the layout assumes match what matplotlib draws: real text extents stay apart."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    for problem, diagram in samples[:8]:
        layout = diagram_layout(problem, diagram)
        figure = Figure(figsize=(layout.width, layout.height), dpi=100)
        canvas = FigureCanvasAgg(figure)
        axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        axes.set_xlim(0.0, layout.width)
        axes.set_ylim(0.0, layout.height)
        texts = [
            axes.text(lb.x, lb.y, lb.text, ha="center", va="center", fontsize=11.0) for lb in layout.labels
        ]
        renderer = canvas.get_renderer()
        boxes = [t.get_window_extent(renderer).extents for t in texts]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not _overlap(list(a), list(b)), f"{problem.name}: drawn labels overlap"


def test_right_angle_marks_sit_at_the_foot() -> None:
    problem, diagram = _figure("a b c = triangle a b c; h = foot h a b c")
    layout = diagram_layout(problem, diagram)
    assert len(layout.marks) == 1
    foot = layout.points["h"]
    corner = layout.marks[0][1]
    assert math.dist(foot, corner) < 0.2  # the mark's corner is next to the foot, in inches
    # collinear pieces of BC (B-H and H-C) are merged into one drawn segment plus the altitude and the sides
    assert len(layout.segments) == 4


def test_circles_and_page_contain_every_point() -> None:
    problem, diagram = _figure(FOOT)
    layout: Layout = diagram_layout(problem, diagram)
    assert len(layout.circles) == 1
    x, y, r = layout.circles[0]
    for name in "abc":
        assert math.isclose(math.dist((x, y), layout.points[name]), r, rel_tol=1e-9)
    for px, py in layout.points.values():
        assert 0 < px < layout.width and 0 < py < layout.height


def test_errors_name_the_problem(tmp_path: Path) -> None:
    problem, diagram = _figure(FOOT)
    with pytest.raises(RenderError, match="format 'jpg'"):
        render_diagram(problem, diagram, tmp_path / "x.jpg", fmt="jpg")
    partial = Diagram(points={k: v for k, v in diagram.points.items() if k != "o"}, attempts=1)
    with pytest.raises(RenderError, match="no coordinates for points o"):
        diagram_layout(problem, partial)


def test_constructions_missing_from_the_table_are_drawn_from_their_facts() -> None:
    definitions: dict[str, ConstructionDef] = dict(default_definitions())
    base = definitions["on_tline"]
    definitions["my_perp"] = base.model_copy(update={"name": "my_perp"})
    problem = parse_problem("a b c = triangle a b c; d = my_perp d a b c", definitions=definitions)
    diagram = realise(problem, np.random.default_rng(0), 100, definitions=definitions)
    layout = diagram_layout(problem, diagram, definitions=definitions)
    triangle = parse_problem("a b c = triangle a b c")
    without_d = Diagram(points={k: v for k, v in diagram.points.items() if k != "d"}, attempts=1)
    # perp d a b c draws d-a and b-c; b-c merges with the side BC already drawn
    assert len(layout.segments) == len(diagram_layout(triangle, without_d).segments) + 1
    with pytest.raises(RenderError, match="no drawing for construction 'my_perp'"):
        diagram_layout(problem, diagram, definitions={k: v for k, v in definitions.items() if k != "my_perp"})


def test_spec_model_is_strict() -> None:
    with pytest.raises(ValueError):
        DrawSpec.model_validate({"segments": [["a"]]})


def test_importing_the_renderer_does_not_import_matplotlib() -> None:
    code = "import sys, geosynth.synth._render; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _drawn(layout: Layout, a: str, b: str) -> bool:
    """Whether some drawn segment covers the segment between points a and b."""
    p, q = layout.points[a], layout.points[b]
    for s, t in layout.segments:
        span = math.dist(s, t)
        if all(math.isclose(math.dist(s, x) + math.dist(x, t), span, abs_tol=1e-6) for x in (p, q)):
            return True
    return False


@pytest.mark.parametrize(
    ("statement", "pairs"),
    [
        ("length b d", [("b", "d")]),
        ("angle a b c = 40", [("a", "b"), ("b", "c")]),
        ("area a c d", [("a", "c"), ("c", "d"), ("d", "a")]),
        ("eqangle a b b c c d d a", [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]),
        ("midp m a b", [("a", "b")]),
        ("contri2 a b c a b d", [("a", "b"), ("b", "c"), ("c", "a"), ("b", "d"), ("d", "a")]),
        ("coll a b c", []),
        ("cyclic a b c d", []),
        ("var x", []),
    ],
)
def test_statements_name_their_segments(statement: str, pairs: list[tuple[str, str]]) -> None:
    assert statement_segments(statement) == pairs


def test_the_goal_and_the_givens_are_drawn() -> None:
    # the midline d e of the goal, which no construction draws
    problem, diagram = _figure(
        "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
    )
    assert _drawn(diagram_layout(problem, diagram), "d", "e")
    assert not _drawn(diagram_layout(problem.model_copy(update={"goal": None}), diagram), "d", "e")
    # a calculation record's goal and givens are passed in: the asked-for diagonal a c of a square
    square, at = _figure("a b c d = isquare a b c d")
    assert not _drawn(diagram_layout(square, at), "a", "c")
    assert _drawn(diagram_layout(square, at, statements=("length a c", "length a b = 12")), "a", "c")
    with pytest.raises(RenderError, match="does not have"):
        diagram_layout(square, at, statements=("length a z",))
