"""A solver-agnostic answer extractor: the last number in the candidate's text."""

from __future__ import annotations

import re
from collections.abc import Hashable

from geotts._models import Completion, Problem

__all__ = ("LastNumberExtractor",)

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


class LastNumberExtractor:
    """Answer = the last decimal number in the text (after an optional marker), as a float; None if absent.

    Useful for solvers whose traces end with the numeric answer; executable traces need a real
    executor instead (for the geo solver, the CLI wires geodsl's).
    """

    def __init__(self, *, marker: str | None = None, allow_truncated: bool = False) -> None:
        """Configure the extractor.

        Args:
            marker: Only text after the last occurrence of this marker (e.g. ``"Answer:"``) is searched;
                a candidate without the marker has no answer.
            allow_truncated: Accept candidates stopped by the token limit (rejected by default).
        """
        self.marker = marker
        self.allow_truncated = allow_truncated

    def __call__(self, completion: Completion, trace_type: str | None, problem: Problem) -> Hashable | None:
        """Extract the answer of ``completion`` (the trace type and the problem are not used)."""
        if completion.finish_reason == "length" and not self.allow_truncated:
            return None
        text = completion.text
        if self.marker is not None:
            at = text.rfind(self.marker)
            if at < 0:
                return None
            text = text[at + len(self.marker) :]
        found = _NUMBER.findall(text.replace(",", ""))
        return float(found[-1]) if found else None
