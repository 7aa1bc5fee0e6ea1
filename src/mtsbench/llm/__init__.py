"""The LLM interface: typed tasks with prompts, backends (mock, ...), and call metering."""
