"""The controller loop, in the order data flows: reflector (LIST+WATCH) -> store (cache)
-> queue (keyed, deduplicated, rate limited) -> controller (workers) -> reconcile(obj, ctx)
with a context (context). Around it: kinds (resources), secondary watches and the shared
reflector pool (sources), event predicates, and the finalizer flow.

Never imports the manager, the command line or the testing package.
"""
