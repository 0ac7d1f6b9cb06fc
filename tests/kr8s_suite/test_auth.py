"""kr8s's own tests/test_auth.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_auth import *  # noqa: F403
