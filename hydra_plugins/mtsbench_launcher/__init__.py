"""mtsbench's Hydra plugins (Hydra instantiates launchers from the ``hydra_plugins`` namespace only)."""
