"""Differential fuzzer: the same requests on the embedded server and on kube-apiserver (issue 28).

``spec.py`` holds what a kind offers the fuzzer (valid objects, invalidating mutations,
updates), ``common.py`` the strategies shared by kinds, one module per kind group
(``core``, ``workloads``, ``networking``, ``rbac``) the kinds, ``kinds.py`` the table,
``runner.py`` the two backends, the normalisation and the comparison, and
``test_differential.py`` the pytest entry point.
"""
