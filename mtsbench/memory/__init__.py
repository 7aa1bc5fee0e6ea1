"""The memory store, its attention state, and retrieval with exact cost accounting."""
