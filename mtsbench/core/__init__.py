"""The vocabulary every layer shares: parameter declarations (``params``), time units, cost
scopes, the user-fact value type, the seeding helper and where the packaged resources are.

May import: ``mtsbench.errors`` only (and each other). Everything else may import it.
"""
