"""Differences the fuzzer still finds, per kind and property: those properties are
expected failures (``xfail(strict=False)``: a run that passes is reported as XPASS, not as
an error).

Each entry says what differs; the differences registry
(reconcile_kit/testing/apiserver/differences.py, "Differences the fuzzer still finds")
lists them too.
"""

from __future__ import annotations

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    ("ClusterRole", "invalid"): "an aggregationRule selector with an invalid key lacks the "
    "'invalid label selector.' cause",
    ("Pod", "update"): "the text of the pod update rule's Forbidden message differs",
    ("PersistentVolumeClaim", "update"): "the text of the immutable spec message differs",
    ("Pod", "invalid"): "a resource name neither standard nor qualified (bogus) is accepted",
    ("Event", "invalid"): "core/v1 Event names kube-apiserver accepts are refused",
    ("PodDisruptionBudget", "invalid"): "PodDisruptionBudget names kube-apiserver accepts are "
    "refused",
    ("Lease", "invalid"): "a MicroTime without microseconds is accepted (kube-apiserver: 400 "
    "with Go's time-parse message)",
    ("Service", "update"): "allocateLoadBalancerNodePorts or a nodePort an update adds or "
    "keeps is not owned as kube-apiserver owns it",
    ("Service", "invalid"): "the causes of duplicate ports differ",
    ("Secret", "update"): "an update of an immutable Secret's data is accepted in one case "
    "kube-apiserver refuses (data forbidden once immutable)",
}
"""(kind, property) pairs that fail today, with what differs."""
