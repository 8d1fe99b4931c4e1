"""The final output files of a run, streamed shard by shard and published atomically at the end."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from geosynth.mts._models import TRACE_TYPES, Drop, SourceProblem, Trace, TraceType
from geosynth.mts._pa import DiagramSetting, pa_record
from geosynth.mts._store import dump_line
from geosynth.mts.errors import MTSOutputError

__all__ = ("OutputWriter",)


class _Stream:
    """One JSON Lines output written to a temporary file and renamed on commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        self.handle: IO[str] = os.fdopen(fd, "w", encoding="utf-8", newline="\n")

    def write(self, row: Mapping[str, Any]) -> None:
        self.handle.write(dump_line(row) + "\n")

    def commit(self) -> None:
        self.handle.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.handle.close()
        Path(self.tmp).unlink(missing_ok=True)


class OutputWriter:
    """Writes ``traces/<type>.jsonl``, ``pa/<type>.jsonl`` and ``drops.jsonl`` under ``out``.

    Args:
        out: the output folder.
        images_dir: where the diagrams are; they are copied to ``pa/images/`` (None: not copied).
        setting: how the PA records give the diagram (:func:`geosynth.mts.pa_record`).
    """

    def __init__(self, out: Path, images_dir: Path | None, setting: DiagramSetting = "image") -> None:
        try:
            self._traces = {t: _Stream(out / "traces" / f"{t}.jsonl") for t in TRACE_TYPES}
            self._pa = {t: _Stream(out / "pa" / f"{t}.jsonl") for t in TRACE_TYPES}
            self._drops = _Stream(out / "drops.jsonl")
        except OSError as exc:
            raise MTSOutputError(f"cannot write in {str(out)!r}: {exc.strerror or exc}") from exc
        self._images_dir = images_dir if setting == "image" else None
        self._setting: DiagramSetting = setting
        self._image_out = out / "pa" / "images"
        self.images_copied = 0
        self.images_missing: list[str] = []
        self.counts: dict[TraceType, int] = dict.fromkeys(TRACE_TYPES, 0)

    def _all(self) -> list[_Stream]:
        return [*self._traces.values(), *self._pa.values(), self._drops]

    def drops(self, drops: Sequence[Drop]) -> None:
        """Record drops that happened before any shard (malformed records)."""
        for d in drops:
            self._drops.write(d.model_dump(mode="json"))

    def _image(self, problem: SourceProblem) -> None:
        if self._images_dir is None or not problem.diagram:
            return
        source = self._images_dir / problem.diagram
        target = self._image_out / problem.diagram
        if not source.is_file():
            self.images_missing.append(problem.diagram)
            return
        if not target.is_file() or target.stat().st_size != source.stat().st_size:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        self.images_copied += 1

    def shard(
        self, problems: Sequence[SourceProblem], stage_rows: Mapping[str, Sequence[Mapping[str, Any]]]
    ) -> None:
        """Write one shard's traces, PA records and drops (problem order, then trace-type order)."""
        found: dict[tuple[str, str], Trace] = {}
        for stage in ("verify", "cot_program", "cot_pal"):
            for row in stage_rows.get(stage, ()):
                if "trace" in row:
                    trace = Trace.model_validate(row["trace"])
                    found[(trace.problem_id, trace.trace_type)] = trace
                else:
                    self._drops.write(row["drop"])
        for p in problems:
            self._image(p)
            found[(p.id, "program")] = Trace(problem_id=p.id, trace_type="program", text=p.program)
            for t in TRACE_TYPES:
                trace = found.get((p.id, t))
                if trace is not None:
                    self._traces[t].write(trace.model_dump(mode="json"))
                    self._pa[t].write(pa_record(p, trace, self._setting))
                    self.counts[t] += 1

    def commit(self) -> None:
        """Publish every file (each rename is atomic)."""
        for s in self._all():
            s.commit()

    def abort(self) -> None:
        """Discard the temporary files."""
        for s in self._all():
            s.abort()
