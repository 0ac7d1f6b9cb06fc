"""kr8s's own tests/test_gen.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_gen import *  # noqa: F403
