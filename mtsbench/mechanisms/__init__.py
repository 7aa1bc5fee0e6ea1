"""Pure, vectorised mechanism math: arrays in, arrays out, no clock, LLM or I/O."""
