"""Many controllers in one process: the Manager, leader election on a Lease, Prometheus
metrics, health probes and log formatting.
"""
