"""kr8s's own tests/test_api.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_api import *  # noqa: F403
