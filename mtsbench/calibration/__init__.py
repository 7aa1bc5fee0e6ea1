"""How far one LLM's conclusions carry to another: ``mtsbench calibrate A B`` compares two
runs (``calibrate``), ``--fit`` fits an error profile of B against A (``profile_fit``);
``cli`` is the command line above both.

May import: ``api`` (to load runs) and everything below it.
"""
