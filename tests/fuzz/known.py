"""Differences the fuzzer still finds, per kind and property: those properties are
expected failures (``xfail(strict=False)``: a run that passes is reported as XPASS, not as
an error).

Each entry says what differs; the differences registry
(reconcile_kit/testing/apiserver/differences.py, "Differences the fuzzer still finds")
lists them too.
"""

from __future__ import annotations

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}
"""(kind, property) pairs that fail today, with what differs."""
