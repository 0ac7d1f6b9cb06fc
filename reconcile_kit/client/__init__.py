"""The request layer: reconcile_kit's exception hierarchy (errors), kr8s's httpx client
over aiohttp (transport), client-side rate limits (ratelimit), and API discovery of status
subresources (discovery).

The bottom layer: it imports nothing else from reconcile_kit.
"""
