"""The LLM layer: typed tasks, backends, record/replay, metering.

- ``base``: the ``LLM`` protocol, the result types (Summary, Fact, EventTag, Relation,
  Impression), ``Meter`` and ``LLMError``.
- ``task``: what a task is (``Task``) and how its answer is read (JSON found, validated
  against its schema, converted); ``tasks``: one module per task (signature, schema,
  en/zh prompts, the mock's and the fake server's answers), registered; ``prompts``: what
  the prompts share (system and repair messages, how facts and lists are shown).
- backends, each a method per task over one ``ask``: ``mock.MockLLM`` (from the hints, by
  the rules of ``heuristics``), ``openai_backend.OpenAILLM`` (any OpenAI-compatible
  server), ``replay.ReplayLLM`` (a cassette; its caller tells it the scenario it serves,
  ``ReplayLLM.serve``), ``local.LocalLLM`` (a llama.cpp server it starts itself); ``chat``
  holds the repair and failure logic of the chat backends, ``cassette`` the JSONL record
  format.
- ``testing.FakeOpenAI``: a local fake server for tests.
"""
