"""Loading what ``reconcile-kit run``, ``rbac``, ``manifests`` and ``crd`` are given: the
one target loader of every subcommand, so each reports a TARGET it cannot load with the
same clean error (``Error: TARGET: ...``, exit code 1, no traceback).

TARGET is ``package.module:attr``, ``path/to/file.py:attr`` or ``path/to/file.py`` (attr
defaults to ``manager``). The attribute is a Manager, a Controller or a list of
``(controller, reconcile)`` pairs, or a function (plain or async, no arguments) that
returns one of those.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ..manager.manager import Manager
from ..multicluster.manager import MultiClusterManager
from ..runtime.controller import Controller

__all__ = ["TargetError", "attribute", "import_module", "load_manager"]


class TargetError(ValueError):
    """TARGET could not be loaded or does not define a Manager or controllers."""


def _import(target: str) -> tuple[Any, str]:
    spec, _, attr = target.rpartition(":") if ":" in target else (target, "", "manager")
    attr = attr or "manager"
    return attribute(import_module(spec, target), spec, target, attr), attr


def attribute(module: ModuleType, spec: str, target: str, attr: str) -> Any:  # Any: TARGET's
    """``module.attr``, ``module`` imported from ``spec`` of ``target``.

    Raises:
        TargetError: ``module`` has no ``attr`` (named as given: the path, or the module).
    """
    if not hasattr(module, attr):
        shown = spec if spec.endswith(".py") or "/" in spec else module.__name__
        raise TargetError(f"{target}: {shown} has no attribute {attr!r}")
    return getattr(module, attr)


def import_module(spec: str, target: str) -> ModuleType:
    """The module ``spec`` names: ``package.module`` or ``path/to/file.py``.

    Raises:
        TargetError: naming ``target``, when the file does not exist, the module (or one it
            imports) cannot be found, or importing it raises (the error's type and message).
    """
    if spec.endswith(".py") or "/" in spec:
        path = Path(spec)
        if not path.is_file():
            raise TargetError(f"{target}: no such file {path}")
        name = f"reconcile_kit_target_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise TargetError(f"{target}: cannot import {path}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.parent.resolve()))
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            sys.modules.pop(name, None)
            raise _import_failed(target, error) from error
        return module
    if not spec:
        raise TargetError(f"{target}: no module named (use package.module[:attr] or file.py)")
    try:
        return importlib.import_module(spec)
    except Exception as error:
        raise _import_failed(target, error) from error


def _import_failed(target: str, error: Exception) -> TargetError:
    if isinstance(error, ModuleNotFoundError):
        hint = "" if "." in target or "/" in target else " (is it installed, or on PYTHONPATH?)"
        return TargetError(f"{target}: cannot import: {error}{hint}")
    return TargetError(f"{target}: importing it raised {type(error).__name__}: {error}")


async def _call(target: str, attr: str, function: Any) -> Any:  # Any: what TARGET returns
    """``function()``, awaited when it returns an awaitable.

    Raises:
        TargetError: it raised (its type and message, as an import that raised).
    """
    try:
        value = function()
        if inspect.isawaitable(value):
            value = await value
    except Exception as error:
        raise TargetError(
            f"{target}: calling {attr}() raised {type(error).__name__}: {error}"
        ) from error
    return value


async def load_manager(target: str) -> Manager:
    """The Manager TARGET defines (wrapping bare controllers in a new Manager).

    Raises:
        TargetError: TARGET cannot be imported, its function raises, or it is of the wrong
            type (named).
    """
    value, attr = _import(target)
    what = f"{attr} is"
    if callable(value) and not isinstance(value, Manager | Controller):
        value, what = await _call(target, attr, value), f"{attr}() returned"
    if isinstance(value, Manager):
        return value
    if isinstance(value, MultiClusterManager):
        return value.manager  # the management side; `run` runs the fleet (fleet_of)
    if isinstance(value, list | tuple) and all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Controller) for p in value
    ):
        manager = Manager()
        for controller, reconcile in value:
            manager.add(controller, reconcile)
        return manager
    raise TargetError(
        f"{target}: {what} {_described(value)}, not a Manager, a "
        "MultiClusterManager or a list of (controller, reconcile) pairs"
    )


def _described(value: object) -> str:
    """``None``, or the kind of thing ``value`` is with its article: ``an int``, ``a
    Controller``."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
