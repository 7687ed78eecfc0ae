"""The pure core: value objects, ids, scoring and key functions.

Nothing here performs I/O, touches asyncio or imports a third-party client.
"""
