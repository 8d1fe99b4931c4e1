"""Errors of the calculation solver."""

from __future__ import annotations

from geosynth.errors import GeoSynthError


class CalcFormatError(GeoSynthError, ValueError):
    """A calculation record is malformed.

    Attributes:
        record: The record's id (or its position when it has none).
        field: The field the problem was found in.
    """

    def __init__(self, message: str, *, record: str, field: str) -> None:
        super().__init__(f"record {record}: field {field!r}: {message}")
        self.record = record
        self.field = field
