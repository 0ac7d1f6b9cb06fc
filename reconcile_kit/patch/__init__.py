"""Writing the reconciled object: PatchHelper (snapshot, mutate, send minimal merge patches),
the RFC 7386 diff it sends (mergepatch), and copy-on-access kr8s objects over cached
documents that make snapshots cheap (snapshot).
"""
