"""Processes the agent runs on its memory: attention labelling (and, later, summaries,
consolidation and inference)."""
