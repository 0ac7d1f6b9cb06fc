"""CronJob schedules and time zones (kubernetes pkg/apis/batch/validation
validateScheduleFormat with github.com/robfig/cron/v3 ParseStandard, validateTimeZone):
the parser's error texts, which the 422 carries."""

from __future__ import annotations

import re
import zoneinfo

_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_DURATION = re.compile(r"([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (min, max, names) of minute, hour, day of month, month, day of week.
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, {name: i + 1 for i, name in enumerate(_MONTHS)}),
    (0, 6, {name: i for i, name in enumerate(_DAYS)}),
)
_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


class CronError(ValueError):
    """A schedule robfig/cron refuses; the message is the parser's."""


def _int(expr: str) -> int:
    """mustParseInt: strconv.Atoi, not negative."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    number = int(expr)
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {expr}")
    return number


def _int_or_name(expr: str, names: dict[str, int]) -> int:
    return names[expr.lower()] if expr.lower() in names else _int(expr)


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> None:
    """getRange: ``*``, ``N``, ``N-M``, each with an optional ``/step``."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) > 2:
            raise CronError(f"too many hyphens: {expr}")
        end = _int_or_name(low_and_high[1], names) if len(low_and_high) == 2 else start
    step = 1
    if len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = high
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        duration = spec[len("@every ") :]
        if not _DURATION.fullmatch(duration) or duration in ("", "."):
            raise CronError(f'failed to parse duration {spec}: time: invalid duration "{duration}"')
        return
    raise CronError(f"unrecognized descriptor: {spec}")


def parse_standard(spec: str) -> None:
    """cron.ParseStandard: five fields (or a descriptor); raises CronError."""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, spec = spec.partition(" ")
        location = head.split("=", 1)[1]
        if not location_exists(location):
            raise CronError(f"provided bad location {location}: unknown time zone {location}")
        spec = spec.strip()
    if spec.startswith("@"):
        _descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != 5:
        shown = "[" + " ".join(fields) + "]"
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {shown}")
    for field, (low, high, names) in zip(fields, _BOUNDS, strict=True):
        for expr in field.split(","):
            _range(expr, low, high, names)


def location_exists(name: str) -> bool:
    """time.LoadLocation succeeds (kube-apiserver embeds the IANA database)."""
    if name in ("UTC", "", "Local"):
        return True
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def time_zone_errors(zone: str) -> list[str]:
    """validateTimeZone's messages for a set ``timeZone``."""
    if not zone:
        return ["timeZone must be nil or non-empty string"]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.fullmatch(part):
            return [f"unknown time zone {zone}"]
    errs = []
    if zone.lower() == "local":
        errs.append(
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        )
    if not location_exists(zone):
        errs.append(f"unknown time zone {zone}")
    return errs
