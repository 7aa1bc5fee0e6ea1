"""Memory systems: the unit under test (``system`` config group). ``base`` holds the
``MemorySystem`` protocol a scenario drives; ``mts`` is the seed design, ``bm25`` a plain
lexical store."""
