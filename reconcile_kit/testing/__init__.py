"""Testing support: an embedded Kubernetes API server and pytest fixtures.

``APIServer`` is an in-process stand-in for kube-apiserver; see its docstring.
``ControlPlane`` runs a real etcd and kube-apiserver (built by scripts/build-control-plane)
with the same surface.
"""

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
