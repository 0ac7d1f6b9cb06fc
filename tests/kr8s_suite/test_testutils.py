"""kr8s's own tests/test_testutils.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_testutils import *  # noqa: F403
