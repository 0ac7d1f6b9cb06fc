"""kr8s's own tests/test_objects.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_objects import *  # noqa: F403
