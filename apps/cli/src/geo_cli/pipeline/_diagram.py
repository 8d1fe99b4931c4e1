"""Schematic diagrams drawn from a record's clauses, for records whose diagram image is not available.

The bundled sample has no images, yet the PA records, the trainer and the policy model all expect one
per problem. The schematic is honest about what it is: points placed on a circle (not the original
geometry), every structural clause drawn as a polyline through its points or as a circle, and the
semantic clauses written underneath, with a caption saying the figure was drawn from the clauses.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.patches import Circle

__all__ = ("draw_schematic",)

_POINT = re.compile(r"^[A-Z]\d*'?$")


def _points(stru: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for clause in stru:
        for token in clause.replace("\\odot", " ").split():
            if _POINT.match(token):
                seen.setdefault(token, None)
    return list(seen)


def _layout(stru: Sequence[str]) -> dict[str, tuple[float, float]]:
    """The longest ``line`` clause on a horizontal base line; every other point on an arc above it."""
    lines = [c.split()[1:] for c in stru if c.startswith("line ")]
    base = [p for p in max(lines, key=len, default=[]) if _POINT.match(p)]
    pos: dict[str, tuple[float, float]] = {}
    for i, name in enumerate(base):
        pos[name] = (-1.6 + 3.2 * i / max(1, len(base) - 1), -0.8)
    rest = [p for p in _points(stru) if p not in pos]
    for i, name in enumerate(rest):
        angle = math.pi * (i + 1) / (len(rest) + 1)
        pos[name] = (-1.4 * math.cos(angle), -0.8 + 1.9 * math.sin(angle))
    return pos


def _circle_clause(clause: str) -> tuple[str, list[str]] | None:
    r"""``\odot O lieson A B C`` -> (``O``, [A, B, C]); None for other clauses."""
    parts = clause.split()
    if len(parts) >= 3 and parts[0] == "\\odot" and parts[2] == "lieson":
        return parts[1], [p for p in parts[3:] if _POINT.match(p)]
    return None


def draw_schematic(stru: Sequence[str], sem: Sequence[str], out: Path, *, title: str = "") -> Path:
    r"""Draw the schematic of one problem as a PNG.

    Args:
        stru: Structural clauses (``line A B C``, ``\odot O lieson A B``).
        sem: Semantic clauses, written under the figure.
        out: The PNG file to write.
        title: Optional title (the problem id).

    Returns:
        ``out``.
    """
    from matplotlib.figure import Figure

    pos = _layout(stru)
    fig = Figure(figsize=(3.2, 3.6), dpi=80)
    ax = fig.add_axes((0.05, 0.3, 0.9, 0.62))
    ax.set_aspect("equal")
    ax.axis("off")
    box = [-2.0, 2.0, -1.2, 1.4]  # x min, x max, y min, y max
    for clause in stru:
        circle = _circle_clause(clause)
        if circle is not None:
            centre, on = circle
            if centre in pos and on and on[0] in pos:
                (cx, cy), (px, py) = pos[centre], pos[on[0]]
                r = math.hypot(px - cx, py - cy)
                ax.add_patch(_circle_patch((cx, cy), r))
                box = [min(box[0], cx - r), max(box[1], cx + r), min(box[2], cy - r), max(box[3], cy + r)]
            continue
        pts = [pos[p] for p in clause.split()[1:] if p in pos]
        if len(pts) >= 2:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black", linewidth=1.2)
    for name, (x, y) in pos.items():
        ax.plot([x], [y], "o", color="tab:blue", markersize=4)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=9)
    ax.set_xlim(box[0] - 0.2, box[1] + 0.2)
    ax.set_ylim(box[2] - 0.2, box[3] + 0.2)
    text = "\n".join(s.replace("\\", "") for s in sem[:6]) + ("\n..." if len(sem) > 6 else "")
    fig.text(0.05, 0.02, text, fontsize=7, family="monospace", va="bottom")
    fig.suptitle(f"{title} (schematic from clauses)".strip(), fontsize=8)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.tmp")
    fig.savefig(partial, format="png")
    os.replace(partial, out)  # a killed run never leaves a torn image that a resumed run would keep
    return out


def _circle_patch(centre: tuple[float, float], radius: float) -> Circle:
    from matplotlib.patches import Circle

    return Circle(centre, radius, fill=False, color="tab:gray", linewidth=1.0)
