"""Importers of public long-conversation memory benchmarks into scenario files.

``mtsbench import FORMAT FILE -o DIR`` (``command.import_main``) turns each conversation
or question into one scenario file; each format is a module that registers itself
(``registry``: ``locomo``, ``longmemeval``), its scenarios written by ``writer`` and
checked by the scenario loader.
Structurally bad input is a one-line ``DataError``; dirty but readable input (bad
evidence ids, unsorted sessions, ...) is repaired or dropped and every such case counted.
"""
