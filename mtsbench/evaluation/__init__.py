"""From saved results to metrics: evidence recall at depths and budgets, earned credit,
answers scored end to end, attention measured against what is later asked, copied
answers, and the contract checker every registered component must pass (``checks``).
Nothing here runs a system; it reads what a run saved.

May import: ``outputs`` (to read results), ``systems``, ``processes``, ``llm``,
``memory``, ``embed``, ``mechanisms``, ``scenario``, ``config``, ``core``, ``errors``.
"""
