"""Importers of public long-conversation memory benchmarks into scenario files.

``mtsbench import locomo FILE -o DIR`` and ``mtsbench import longmemeval FILE -o DIR``
(``command.import_main``) turn each conversation or question into one scenario file
(``locomo``, ``longmemeval``), written by ``writer`` and checked by the scenario loader.
Structurally bad input is a one-line ``DataError``; dirty but readable input (bad
evidence ids, unsorted sessions, ...) is repaired or dropped and every such case counted.
"""
