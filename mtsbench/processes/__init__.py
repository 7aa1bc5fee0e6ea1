"""Processes the agent runs on its memory: attention labelling, summarization with major
events, consolidation at idle, and inference to conjectures."""
