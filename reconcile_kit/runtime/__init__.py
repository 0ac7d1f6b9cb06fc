"""The controller loop, in the order data flows: reflector (LIST+WATCH) -> store (cache)
-> queue (keyed, deduplicated, rate limited) -> controller (workers) -> reconcile(obj, ctx)
with a context (context). Around it: kinds (resources), secondary watches and the shared
reflector pool (sources), event predicates, the finalizer flow, and the EventRecorder
behind ``ctx.recorder`` (events).

Never imports the manager, the command line or the testing package.
"""
