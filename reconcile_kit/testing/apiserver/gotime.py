"""metav1.Time and metav1.MicroTime as kube-apiserver decodes and writes them.

Decoding runs Go's ``time.Parse`` with ``time.RFC3339`` (Time) or
``"2006-01-02T15:04:05.000000Z07:00"`` (MicroTime); a value it refuses fails the whole
request with Go's ``ParseError`` text (``parsing time "x" as "layout": cannot parse "y" as
"z"``, ``...: month out of range``, ``...: extra text: "..."``). Writing is ``t.UTC()``
formatted with the same layout: offsets folded into UTC, a Time's fractional seconds
dropped, a MicroTime's kept to the microsecond.
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta

__all__ = ["TimeParseError", "canonical_time"]

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_DATE_TIME = (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"))
_ELEMENTS: dict[str, tuple[tuple[str, str], ...]] = {
    # layout -> (literal prefix, element) in order, as time.nextStdChunk splits it; the
    # zone (Z07:00) follows
    RFC3339: _DATE_TIME,
    RFC3339_MICRO: (*_DATE_TIME, ("", ".000000")),
}


_ZERO = datetime(1, 1, 1, tzinfo=UTC)


class TimeParseError(ValueError):
    """A value Go's time.Parse refuses; the message is Go's."""


def canonical_time(value: str, micro: bool) -> str | None:
    """``value`` as kube-apiserver stores a Time (``micro``: a MicroTime) it decoded (None,
    JSON's null, for Go's zero time).

    Raises:
        TimeParseError: time.Parse refuses ``value`` (Go's message).
    """
    layout = RFC3339_MICRO if micro else RFC3339
    fields = _Parse(layout, value).run()
    year, month, day, hour, minute, second, nanos, offset = fields
    if year < 1:  # outside what datetime holds: kept as sent
        return value
    moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    moment -= timedelta(seconds=offset)
    if moment == _ZERO and nanos == 0:
        return None  # Time.MarshalJSON: the zero time is null
    text = f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S")
    return f"{text}.{nanos // 1000:06d}Z" if micro else f"{text}Z"


def _quote(text: str) -> str:
    """time's own quote(): ``"`` and ``\\`` escaped, non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for char in text:
        if char >= "\x80" or char < " ":
            out += [f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass")]
        else:
            out.append("\\" + char if char in '"\\' else char)
    return "".join(out) + '"'


def _digits(text: str, at: int) -> bool:
    return at < len(text) and "0" <= text[at] <= "9"


def _getnum(text: str, fixed: bool) -> tuple[int, str]:
    """time.getnum: one or two leading digits (``fixed``: exactly two)."""
    if not _digits(text, 0):
        raise _Bad
    if not _digits(text, 1):
        if fixed:
            raise _Bad
        return int(text[0]), text[1:]
    return int(text[:2]), text[2:]


def _atoi(text: str) -> int:
    """time.atoi: an optional sign, then digits only."""
    sign = -1 if text[:1] == "-" else 1
    digits = text[1:] if text[:1] in ("-", "+") else text
    if not all("0" <= char <= "9" for char in digits):
        raise _Bad
    return sign * int(digits or "0")


class _Bad(Exception):
    """time's errBad: the element does not parse."""


class _Parse:
    """time.parse for the two layouts, element by element, with its error texts."""

    def __init__(self, layout: str, value: str) -> None:
        self.layout, self.value = layout, value
        self.rest = value
        self.numbers = {"2006": 0, "01": 1, "02": 1, "15": 0, "04": 0, "05": 0}
        self.nanos = 0
        self.offset = 0

    def error(self, layout_elem: str, value_elem: str, message: str = "") -> TimeParseError:
        if message:
            return TimeParseError(f"parsing time {_quote(self.value)}{message}")
        return TimeParseError(
            f"parsing time {_quote(self.value)} as {_quote(self.layout)}: cannot parse "
            f"{_quote(value_elem)} as {_quote(layout_elem)}"
        )

    def run(self) -> tuple[int, int, int, int, int, int, int, int]:
        elements = _ELEMENTS[self.layout]
        for index, (prefix, element) in enumerate(elements):
            self._skip(prefix)
            hold = self.rest
            try:
                out_of_range = self._element(element, elements[index + 1 :])
            except _Bad:
                raise self.error(element, hold) from None
            if out_of_range:
                raise self.error(element, self.rest, f": {out_of_range} out of range")
        self._zone()
        if self.rest:
            raise self.error("", self.rest, f": extra text: {_quote(self.rest)}")
        n = self.numbers
        if not 1 <= n["02"] <= _days_in(n["01"], n["2006"]):
            raise self.error("", self.rest, ": day out of range")
        return (n["2006"], n["01"], n["02"], n["15"], n["04"], n["05"], self.nanos, self.offset)

    def _skip(self, prefix: str) -> None:
        """time.skip: the literal ``prefix``; the error names the value left at the mismatch."""
        for char in prefix:
            if not self.rest or self.rest[0] != char:
                raise self.error(prefix, self.rest)
            self.rest = self.rest[1:]

    def _element(self, element: str, following: tuple[tuple[str, str], ...]) -> str:
        """Parse one element; the name of a field out of range, or ""."""
        rest = self.rest
        if element == "2006":
            if len(rest) < 4 or not _digits(rest, 0):
                raise _Bad
            self.numbers[element], self.rest = _atoi(rest[:4]), rest[4:]
            return ""
        if element == ".000000":
            if len(rest) < 7:
                raise _Bad
            out_of_range = self._nanoseconds(rest, 7)
            self.rest = rest[7:]
            return out_of_range
        number, self.rest = _getnum(rest, element != "15")
        self.numbers[element] = number
        limits = {"01": (1, 12, "month"), "15": (0, 23, "hour"), "04": (0, 59, "minute")}
        low, high, name = limits.get(element, (0, 59, "second"))
        if element == "02":
            return ""
        if not low <= number <= high:
            return name
        if element == "05":
            return self._unannounced_fraction(following)
        return ""

    def _unannounced_fraction(self, following: tuple[tuple[str, str], ...]) -> str:
        """A fractional second the layout does not name is taken all the same."""
        rest = self.rest
        if len(rest) < 2 or rest[0] not in ".," or not _digits(rest, 1):
            return ""
        if following and following[0][1] == ".000000":
            return ""
        end = 2
        while _digits(rest, end):
            end += 1
        out_of_range = self._nanoseconds(rest, end)
        self.rest = rest[end:]
        return out_of_range

    def _nanoseconds(self, rest: str, count: int) -> str:
        """time.parseNanoseconds of ``rest[:count]`` (the separator included)."""
        if rest[0] not in ".,":
            raise _Bad
        count = min(count, 10)
        nanos = _atoi(rest[1:count])
        if nanos < 0:
            return "fractional second"
        self.nanos = nanos * 10 ** (10 - count)
        return ""

    def _zone(self) -> None:
        """The ``Z07:00`` element: ``Z``, or ``±hh:mm``."""
        rest = self.rest
        if rest[:1] == "Z":
            self.rest = rest[1:]
            return
        if len(rest) < 6 or rest[3] != ":":
            raise self.error("Z07:00", rest)
        self.rest = rest[6:]
        hours = minutes = 0
        bad = False
        try:
            hours = _getnum(rest[1:3], True)[0]
            minutes = _getnum(rest[4:6], True)[0]
        except _Bad:
            bad = True
        # checked in turn, the last one out of range named, before a bad number or sign
        limits = ((hours, 24, "hour"), (minutes, 60, "minute"))
        out_of_range = [name for number, limit, name in limits if number > limit]
        if out_of_range:
            raise self.error(
                "Z07:00", self.rest, f": time zone offset {out_of_range[-1]} out of range"
            )
        if bad or rest[0] not in "+-":
            raise self.error("Z07:00", rest)
        self.offset = (hours * 60 + minutes) * 60 * (-1 if rest[0] == "-" else 1)


def _days_in(month: int, year: int) -> int:
    return calendar.monthrange(year if year >= 1 else 2000 + year % 400, month)[1]
