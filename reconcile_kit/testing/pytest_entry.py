"""The pytest entry point ``reconcile_kit`` (pyproject.toml ``[project.entry-points.pytest11]``).

pytest loads it in every environment where reconcile-kit is installed, so it must not fail
there: when the ``[testing]`` extra (and pytest-asyncio) are installed it loads the plugin,
:mod:`reconcile_kit.testing.pytest_plugin` (fixtures ``apiserver``, ``kube``, ``backend``,
``control_plane``, ``clusters``, option ``--backend``); otherwise it defines those fixtures
so that a test using one fails with the ``pip install`` command that installs what is missing, and
leaves every other test alone.
"""

from __future__ import annotations

import importlib.util
from typing import NoReturn

import pytest

from ..client.extras import missing_packages

__all__ = ["missing"]


def missing() -> list[str]:
    """The modules the plugin needs that are not installed: those of the ``[testing]``
    extra, and pytest-asyncio (``pytest_asyncio``, in the ``[test]`` extra)."""
    found = importlib.util.find_spec("pytest_asyncio") is not None
    return missing_packages("testing") + ([] if found else ["pytest_asyncio"])


_MISSING = missing()

if not _MISSING:
    pytest_plugins = ["reconcile_kit.testing.pytest_plugin"]
else:

    def _unavailable() -> NoReturn:
        pytest.fail(
            "reconcile-kit's pytest fixtures need the Python packages "
            f"{', '.join(map(repr, _MISSING))}: pip install 'reconcile-kit[testing]' "
            "pytest-asyncio",
            pytrace=False,
        )

    @pytest.fixture
    def apiserver() -> NoReturn:
        """Unavailable: the ``[testing]`` extra is not installed."""
        _unavailable()

    @pytest.fixture
    def kube() -> NoReturn:
        """Unavailable: the ``[testing]`` extra is not installed."""
        _unavailable()

    @pytest.fixture
    def backend() -> NoReturn:
        """Unavailable: the ``[testing]`` extra is not installed."""
        _unavailable()

    @pytest.fixture
    def control_plane() -> NoReturn:
        """Unavailable: the ``[testing]`` extra is not installed."""
        _unavailable()

    @pytest.fixture
    def clusters() -> NoReturn:
        """Unavailable: the ``[testing]`` extra is not installed."""
        _unavailable()
