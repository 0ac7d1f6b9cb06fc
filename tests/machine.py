"""The test machine's state, for scenario tests whose timing bounds assume it is not
saturated by other work."""

from __future__ import annotations

import os


def busy_before() -> bool:
    """Whether the machine was already busy before a scenario started its processes (a
    1-minute load average above its cores: other work, not the scenario's processes)."""
    return os.getloadavg()[0] > (os.cpu_count() or 1)
