"""Paths inside volumes (kubernetes pkg/apis/core/validation validateLocalDescendingPath,
validatePathNoBacksteps, ValidateLocalNonReservedPath) and file modes."""

from __future__ import annotations

from .common import Causes, invalid

FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"


def no_backsteps_causes(path: str, field: str) -> Causes:
    """validatePathNoBacksteps: no ``..`` element."""
    if ".." in path.split("/"):
        return [invalid(field, path, "must not contain '..'")]
    return []


def descending_path_causes(path: str, field: str) -> Causes:
    """validateLocalDescendingPath: relative, no ``..`` element."""
    causes = [invalid(field, path, "must be a relative path")] if path.startswith("/") else []
    return causes + no_backsteps_causes(path, field)


def non_reserved_path_causes(path: str, field: str) -> Causes:
    """ValidateLocalNonReservedPath: descending, and not starting with ``..``."""
    causes = descending_path_causes(path, field)
    if path.startswith("..") and not path.startswith("../"):
        causes.append(invalid(field, path, "must not start with '..'"))
    return causes


def mode_causes(mode: object, field: str) -> Causes:
    """A file mode between 0 and 0777."""
    if isinstance(mode, int) and not 0 <= mode <= 0o777:
        return [invalid(field, mode, FILE_MODE_ERROR)]
    return []
