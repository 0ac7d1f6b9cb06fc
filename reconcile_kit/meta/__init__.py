"""Object metadata, edited locally and sent by the PatchHelper: kstatus conditions and
their three-way merge, owner and controller references, finalizers, label and field
selectors, and object identity (ObjectRef).

Imports only reconcile_kit.client.
"""
