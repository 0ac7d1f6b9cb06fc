"""The embedded Kubernetes API server: an in-process test double of kube-apiserver
(storage, watch, CRDs, patch types, validation, discovery, OpenAPI, tables, faults).

Internal: tests use it through :class:`reconcile_kit.testing.APIServer`. The core never
imports it.
"""
