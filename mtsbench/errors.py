"""Every error a user can cause, and how it is shown: one line.

The bottom of the import graph: this module imports nothing from the rest of mtsbench,
so any module (the CLI, the Hydra app, sweeps, the pytest plugin) can use it without
importing another. The classes are re-exported where they used to live
(``mtsbench.config.composition.ConfigError``, ``mtsbench.scenario.loader.ScenarioError``, ...).

- user-facing (``USER_ERRORS``; ``str(error)`` is one line): ``ConfigError`` (a bad
  override or config), ``ScenarioError`` (a malformed scenario), ``LLMError`` (a failed
  LLM call or backend setup), ``GenerateError`` (a bad generator option), ``DataError``
  (an unreadable data set file), ``ReportError`` (not a run or sweep directory).
- internal to the LLM layer, turned into an ``LLMError`` there: ``TransportError`` (no
  answer after the client's retries), ``AnswerError`` (an answer off the task's schema).
- ``OutputError``: an output file or directory that cannot be written (unwritable place,
  full disk); user-facing too.
- ``Interrupted``: SIGTERM turned into an exception (a ``BaseException``, as
  ``KeyboardInterrupt`` is for SIGINT) so a run flushes what is done; ``exit_code`` is
  128 + the signal's number (130 for SIGINT, 143 for SIGTERM).

``user_error(e)`` is the one-line message of a user-facing error (looking through the
exceptions Hydra wraps it in), ``one_line(e)`` that or ``Type: first line``. Both, and
everything the CLI prints or a job writes to ``failure.json``, pass through ``redact``:
API keys (``register_secret``: the value a backend read from the environment) and text
that looks like one (``sk-...``, ``Bearer ...``, ``api_key=...``) become ``<redacted>``.
"""

from __future__ import annotations

import re
import signal
import sys

_SECRETS: set[str] = set()
_VALUE = r"[^\s'\",;()\[\]{}]+"
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"          # sk-... (OpenAI-style keys)
                      rf"|(?<=Bearer ){_VALUE}"                           # an Authorization header
                      rf"|(?<=api[_-]key=){_VALUE}"
                      rf"|(?<=api[_-]key\": \"){_VALUE}")


def register_secret(value: str | None) -> None:
    """Remember ``value`` (an API key read from the environment) so ``redact`` removes it."""
    if isinstance(value, str) and len(value) >= 4:
        _SECRETS.add(value)


def redact(text: str) -> str:
    """``text`` with every registered secret and anything that looks like a key replaced.

    >>> redact("HTTP 500: echo Authorization: Bearer sk-abcdef123456 (api_key=xyz12345)")
    'HTTP 500: echo Authorization: Bearer <redacted> (api_key=<redacted>)'
    """
    text = str(text)
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
    return _KEYLIKE.sub("<redacted>", text)


def fail(message: str, code: int = 2) -> int:
    """Print ``mtsbench: MESSAGE`` (redacted) on stderr and return the exit ``code``: every
    command's one-line error (the CLI and the commands it dispatches to, below it)."""
    print(f"mtsbench: {redact(message)}", file=sys.stderr)
    return code


def _one_line(message) -> str:
    return " ".join(str(message).split())


class ConfigError(Exception):
    """A bad override or config; its str is one line."""


class ScenarioError(Exception):
    """A malformed scenario. ``str(error)`` is always one line (see ``mtsbench.scenario.loader``).

    >>> str(ScenarioError("a.yaml: step 2\\nbad"))
    'a.yaml: step 2 bad'
    """

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(" ".join(str(message).splitlines()))
        #: every problem found, one line each (the message is the first); ``mtsbench validate`` prints them all
        self.problems = [" ".join(str(p).splitlines()) for p in problems] if problems else [str(self)]


class LLMError(Exception):
    """A failed LLM call, or an unusable backend configuration; its str is one line.

    >>> str(LLMError("HTTP 500: boom", task="summarize")), str(LLMError("llm.model is not set"))
    ('LLM task summarize failed: HTTP 500: boom', 'LLM backend: llm.model is not set')
    """

    def __init__(self, reason: str, task: str | None = None):
        self.task = task
        self.reason = _one_line(reason)
        super().__init__(f"LLM task {task} failed: {self.reason}" if task else f"LLM backend: {self.reason}")


class GenerateError(ValueError):
    """A bad generator option; ``str`` is one line naming the option and what was expected."""


class DataError(Exception):
    """A data set file the importer cannot read; ``str(error)`` is one line."""

    def __init__(self, message: str):
        super().__init__(_one_line(message))


class ReportError(Exception):
    """A directory that is neither a run nor a sweep; its str is one line."""


class OutputError(Exception):
    """An output that cannot be written (an unwritable directory, a full disk); one line.

    >>> str(OutputError("/proc/x/summary.json", PermissionError(13, "Permission denied")))
    'cannot write /proc/x/summary.json: Permission denied (errno 13)'
    """

    def __init__(self, where, cause: BaseException):
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        code = getattr(cause, "errno", None)
        super().__init__(_one_line(f"cannot write {where}: {reason}" + (f" (errno {code})" if code else "")))


class Interrupted(BaseException):
    """A run stopped by a signal (SIGTERM; SIGINT is ``KeyboardInterrupt``)."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


def exit_code(stop: BaseException) -> int:
    """The exit code of a run stopped by ``stop``: 128 + its signal (130 SIGINT, 143 SIGTERM).

    >>> exit_code(KeyboardInterrupt()), exit_code(Interrupted())
    (130, 143)
    """
    return 128 + (stop.signum if isinstance(stop, Interrupted) else int(signal.SIGINT))


def signal_name(stop: BaseException) -> str:
    """``SIGINT`` or ``SIGTERM`` (the signal behind ``stop``)."""
    return signal.Signals(exit_code(stop) - 128).name


class TransportError(Exception):
    """A request that got no answer after the client's retries (429, 5xx, timeout, ...)."""

    def __init__(self, reason: str, retries: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.retries = retries


class AnswerError(ValueError):
    """A model's answer is not valid JSON of the task's schema; str is one line."""


USER_ERRORS = (ConfigError, ScenarioError, LLMError, GenerateError, DataError, ReportError, OutputError)


def user_error(e: BaseException | None) -> str | None:
    """The one-line message of an error the user caused (a bad scenario, override or LLM
    setup), looking through the exceptions Hydra wraps it in; None for anything else.

    >>> try:
    ...     try:
    ...         raise ConfigError("override 'x=y': bad")
    ...     except ConfigError as inner:
    ...         raise RuntimeError("wrapped") from inner
    ... except RuntimeError as outer:
    ...     user_error(outer)
    "override 'x=y': bad"
    >>> user_error(KeyError("k")) is None
    True
    """
    while e is not None:
        if isinstance(e, USER_ERRORS):
            return redact(str(e))
        e = e.__cause__
    return None


def one_line(e: BaseException) -> str:
    """``Type: first line of the message`` (the user's one-line message if it is one).

    >>> one_line(ValueError("bad\\nmore")), one_line(KeyError()), one_line(ConfigError("x: y"))
    ('ValueError: bad', 'KeyError', 'x: y')
    """
    message = user_error(e)
    if message is not None:
        return message
    text = redact(str(e)).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
