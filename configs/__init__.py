"""Packaged Hydra configs (a package so Hydra can find them after pip install)."""
