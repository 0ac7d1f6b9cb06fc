"""Audit of reconcile_kit's public API: parameters typed ``Any`` and functions without a
docstring (issue 30).

Public: a function, class or method whose name and module path have no leading
underscore, defined in the package (not re-exported from elsewhere). Counted per
parameter (``self``/``cls`` excluded) and the return annotation. Run:
``python tools/api_audit.py [--package reconcile_kit] [--core] [--list]`` (``--core``:
without ``reconcile_kit.testing``; the embedded API server is internal either way).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType

# internal: the embedded API server, whose public entry is reconcile_kit.testing.APIServer
# (tests/test_public_api.py)
INTERNAL = ("reconcile_kit.testing.apiserver",)


@dataclass
class Audit:
    parameters: int = 0
    any_parameters: list[str] = field(default_factory=list)
    undocumented: list[str] = field(default_factory=list)


def public_modules(package: str, include_testing: bool) -> Iterator[ModuleType]:
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]):
            continue
        if info.name.startswith(INTERNAL) or ".examples" in info.name:
            continue
        if not include_testing and ".testing" in info.name:
            continue
        yield importlib.import_module(info.name)


def _is_any(annotation: object) -> bool:
    if annotation is typing.Any:
        return True
    return isinstance(annotation, str) and annotation.strip() in ("Any", "typing.Any")


def _functions(module: ModuleType) -> Iterator[tuple[str, Callable[..., object]]]:
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(value):
            yield f"{module.__name__}.{name}", value
            for attr, member in vars(value).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member):
                    yield f"{module.__name__}.{name}.{attr}", member
        elif inspect.isfunction(value):
            yield f"{module.__name__}.{name}", value


def audit(package: str, include_testing: bool = True) -> Audit:
    result = Audit()
    seen: set[str] = set()
    for module in public_modules(package, include_testing):
        for qualname, func in _functions(module):
            if qualname in seen:
                continue
            seen.add(qualname)
            if inspect.isclass(func):
                if not inspect.getdoc(func):
                    result.undocumented.append(qualname)
                continue
            name = qualname.rsplit(".", 1)[1]
            if name != "__init__" and not (func.__doc__ or "").strip():
                result.undocumented.append(qualname)
            signature = inspect.signature(func)
            for param in signature.parameters.values():
                if param.name in ("self", "cls"):
                    continue
                result.parameters += 1
                if _is_any(param.annotation):
                    result.any_parameters.append(f"{qualname}({param.name})")
            if _is_any(signature.return_annotation):
                result.parameters += 1
                result.any_parameters.append(f"{qualname} -> Any")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--package", default="reconcile_kit")
    parser.add_argument("--core", action="store_true", help="leave reconcile_kit.testing out")
    parser.add_argument("--list", action="store_true", help="print each finding")
    args = parser.parse_args()
    result = audit(args.package, include_testing=not args.core)
    print(f"public parameters and returns: {result.parameters}")
    print(f"typed Any: {len(result.any_parameters)}")
    print(f"undocumented public functions and classes: {len(result.undocumented)}")
    if args.list:
        for line in result.any_parameters:
            print("  Any:", line)
        for line in result.undocumented:
            print("  undocumented:", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
