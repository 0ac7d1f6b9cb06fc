"""Many controllers in one process: the Manager, leader election on a Lease, Events,
Prometheus metrics, health probes and log formatting.
"""
