"""kr8s's own tests/test_data_utils.py, collected from the installed kr8s (see conftest.py)."""

from kr8s.tests.test_data_utils import *  # noqa: F403
