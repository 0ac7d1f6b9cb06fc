"""kr8s's own tests/test_config.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_config import *  # noqa: F403
