"""Loaders of published process-supervision data, turned into :class:`geoprm.data.PRMItem`.

VisualPRM400K (its "Raw" release) ships JSON Lines; each record holds ``image`` (a path, or a list of
paths), ``question``, ``answer``, ``response``, ``steps_with_score`` (a list of ``{"step", "score",
"num_mc_correct", "num_mc_total"}``, the score being the share of Monte Carlo continuations that
reached the answer) and ``num_mc_sequences``. Its counts give hard-estimation labels directly (a step
is correct when at least one continuation succeeded), so only the teacher is needed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geoprm.errors import DataError


class VisualPRMStep(BaseModel):
    """One step of a VisualPRM400K response with its Monte Carlo statistics."""

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)

    step: str
    """The step's text."""
    score: Annotated[float, Field(ge=0.0, le=1.0)]
    """The share of continuations from this step that reached the answer."""
    num_mc_correct: Annotated[int, Field(ge=0)] | None = None
    """Continuations that reached the answer, when given."""
    num_mc_total: Annotated[int, Field(ge=0)] | None = None
    """Continuations sampled, when given."""

    @property
    def hard_label(self) -> bool:
        """Hard estimation: correct when at least one continuation reached the answer."""
        return self.num_mc_correct > 0 if self.num_mc_correct is not None else self.score > 0.0


class VisualPRMRecord(BaseModel):
    """One VisualPRM400K record."""

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)

    id: str
    """``<file stem>:<line number>`` unless the record carries its own ``id``."""
    images: tuple[str, ...]
    """Image paths (resolved against the image root when one is given)."""
    question: str
    """The question."""
    answer: str
    """The reference answer."""
    response: str = ""
    """The sampled response the steps were split from."""
    steps: Annotated[tuple[VisualPRMStep, ...], Field(min_length=1)]
    """The response's steps with their Monte Carlo statistics."""


def _record(raw: Mapping[str, Any], fallback_id: str, image_root: Path | None) -> VisualPRMRecord:
    image = raw.get("image", raw.get("images", ()))
    images = [image] if isinstance(image, str) else list(image) if isinstance(image, list) else []
    if image_root is not None:
        images = [str(image_root / path) for path in images]
    answer = raw.get("answer")
    return VisualPRMRecord.model_validate(
        {
            "id": str(raw.get("id", fallback_id)),
            "images": tuple(str(path) for path in images),
            "question": raw.get("question"),
            "answer": answer if isinstance(answer, str) or answer is None else json.dumps(answer),
            "response": raw.get("response", ""),
            "steps": tuple(
                {**step, "score": float(step["score"])}
                if isinstance(step, dict) and "score" in step
                else step
                for step in raw.get("steps_with_score") or ()
            ),
        }
    )


def load_visualprm(path: str | Path, *, image_root: str | Path | None = None) -> list[VisualPRMRecord]:
    """Read a VisualPRM400K (Raw) JSON Lines file.

    Args:
        path: the ``.jsonl`` file.
        image_root: the folder the records' image paths are relative to (kept as given when None).

    Returns:
        The records, in file order.

    Raises:
        DataError: the file cannot be read, or a line is not a valid record (the message names the
            file, the line and the field).
    """
    source = Path(path)
    root = Path(image_root) if image_root is not None else None
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise DataError(f"cannot read {source}: {error.strerror}") from error
    records: list[VisualPRMRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            if not isinstance(raw, dict):
                raise DataError(f"{source}:{number}: a record must be a JSON object")
            records.append(_record(raw, f"{source.stem}:{number}", root))
        except json.JSONDecodeError as error:
            raise DataError(f"{source}:{number}: not JSON ({error.msg})") from error
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise DataError(f"{source}:{number}: field {where}: {first['msg']}") from error
    return records
