"""Testing support: an embedded Kubernetes API server and pytest fixtures.

``APIServer`` is an in-process stand-in for kube-apiserver; see its docstring.
``ControlPlane`` runs a real etcd and kube-apiserver (built by scripts/build-control-plane)
with the same surface.

The embedded server needs the ``[testing]`` extra (``pip install 'reconcile-kit[testing]'``:
jsonschema and common-expression-language); without it, using it raises
:class:`~reconcile_kit.client.extras.MissingExtraError` naming the extra. Names load on
first use (PEP 562), so tools that need one table of this package (``reconcile-kit rbac``
reads the built-in kinds of ``testing.apiserver.resources``) do not load the server.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from .apiserver.faults import FaultRule, Faults
    from .apiserver.requestlog import RequestLog, RequestRecord
    from .apiserver.server import APIServer
    from .controlplane import ControlPlane, ControlPlaneError
    from .crds import install_crds
    from .harness import eventually, run_until

__all__ = [
    "APIServer",
    "ControlPlane",
    "ControlPlaneError",
    "FaultRule",
    "Faults",
    "RequestLog",
    "RequestRecord",
    "eventually",
    "install_crds",
    "run_until",
]

_EXPORTS = {
    "APIServer": "apiserver.server",
    "ControlPlane": "controlplane",
    "ControlPlaneError": "controlplane",
    "FaultRule": "apiserver.faults",
    "Faults": "apiserver.faults",
    "RequestLog": "apiserver.requestlog",
    "RequestRecord": "apiserver.requestlog",
    "eventually": "harness",
    "install_crds": "crds",
    "run_until": "harness",
}


def __getattr__(name: str) -> typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
