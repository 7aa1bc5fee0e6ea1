"""mtsbench's sweeper plugin: ``hydra/sweeper=tune``, a tuning study (Hydra instantiates sweepers from the ``hydra_plugins`` namespace only)."""
