"""kr8s's own tests/test_io.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_io import *  # noqa: F403
