"""reconcile_kit.meta.time: metav1.Time and metav1.MicroTime wire forms."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile_kit.meta.time import (
    format_micro_time,
    format_time,
    now_micro_time,
    now_time,
    parse_time,
)

MOMENT = datetime(2026, 11, 21, 5, 35, 31, 123456, tzinfo=UTC)
EAST = timezone(timedelta(hours=2))


def test_time_is_utc_whole_seconds() -> None:
    assert format_time(MOMENT) == "2026-11-21T05:35:31Z"


def test_micro_time_has_six_digits() -> None:
    assert format_micro_time(MOMENT) == "2026-11-21T05:35:31.123456Z"
    assert format_micro_time(MOMENT.replace(microsecond=0)) == "2026-11-21T05:35:31.000000Z"
    assert format_micro_time(MOMENT.replace(microsecond=7)) == "2026-11-21T05:35:31.000007Z"


def test_fractions_are_truncated_not_rounded() -> None:
    last = datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert format_time(last) == "2026-12-31T23:59:59Z"


def test_other_offsets_are_converted_to_utc() -> None:
    assert format_time(datetime(2026, 1, 1, 1, 0, 0, tzinfo=EAST)) == "2025-12-31T23:00:00Z"
    assert format_micro_time(datetime(2026, 1, 1, 1, 0, 0, 5, tzinfo=EAST)) == (
        "2025-12-31T23:00:00.000005Z"
    )


def test_naive_means_utc() -> None:
    naive = MOMENT.replace(tzinfo=None)
    assert format_time(naive) == format_time(MOMENT)
    assert format_micro_time(naive) == format_micro_time(MOMENT)


def test_years_have_four_digits() -> None:
    assert format_time(datetime(5, 1, 2, tzinfo=UTC)) == "0005-01-02T00:00:00Z"


def test_now() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamp, micro = now_time(), now_micro_time()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", micro)
    assert before <= parse_time(stamp) <= after
    assert before <= parse_time(micro) <= after


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-21T05:35:31Z", MOMENT.replace(microsecond=0)),
        ("2026-11-21T05:35:31.123456Z", MOMENT),
        ("2026-11-21T07:35:31.123456+02:00", MOMENT),
        ("2026-11-21T05:35:31.123456789Z", MOMENT),  # Go writes nanoseconds in some fields
        ("2026-11-21T05:35:31", MOMENT.replace(microsecond=0)),
    ],
)
def test_parse(text: str, expected: datetime) -> None:
    parsed = parse_time(text)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01T00:00:00Z", "2026-11-21T05:35Zx"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


moments = st.datetimes(
    min_value=datetime(1, 1, 2),  # a day from either end: offsets must not leave the range
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, EAST, timezone(-timedelta(hours=9))]),
)


@given(moments)
def test_time_round_trip(when: datetime) -> None:
    text = format_time(when)
    assert parse_time(text) == when.replace(microsecond=0)
    assert format_time(parse_time(text)) == text


@given(moments)
def test_micro_time_round_trip(when: datetime) -> None:
    text = format_micro_time(when)
    assert parse_time(text) == when
    assert format_micro_time(parse_time(text)) == text
