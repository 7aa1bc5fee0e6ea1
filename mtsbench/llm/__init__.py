"""The LLM layer: typed tasks, their prompts and schemas, backends, record/replay, metering.

- ``base``: the ``LLM`` protocol, the result types (Summary, Fact, EventTag, Relation,
  Impression), ``Meter`` and ``LLMError``.
- ``prompts``: the English and Chinese prompt of every task; ``tasks``: each answer's
  JSON schema, validator and parser.
- backends: ``mock.MockLLM`` (from the hints), ``openai_backend.OpenAILLM`` (any
  OpenAI-compatible server), ``replay.ReplayLLM`` (a cassette); ``chat`` holds the repair
  and failure logic the last two share, ``cassette`` the JSONL record format.
- ``testing.FakeOpenAI``: a local fake server for tests.
"""
