"""Tab completion for bash: ``eval "$(mtsbench -sc install=bash)"`` (or
``mtsbench completion bash``, the same script).

The script asks ``mtsbench -sc query=bash`` (with the shell's ``COMP_LINE`` and
``COMP_POINT``) for the words that can complete the line:

- the command (``mtsbench ru`` -> ``run``);
- after ``run`` or ``check``: Hydra's own completion of overrides (config groups and their
  options, config keys and their values: ``mtsbench run long_d`` -> ``long_decay=``), asked
  of the Hydra app with the command word and the words that are not overrides left out
  (Hydra's completion takes the whole line as overrides);
- anything else: nothing, and bash completes file names.

Hydra's own ``-sc install=bash`` of the app would query ``mtsbench -sc query=bash`` with
``run`` in the line, which Hydra cannot parse: that is why the top-level ``-sc`` is ours.
"""

from __future__ import annotations

import os
import sys

SCRIPT = r"""# mtsbench tab completion for bash: eval "$(mtsbench -sc install=bash)"
_mtsbench_completion()
{
    local words word choices
    words=($COMP_LINE)
    word=${words[$COMP_CWORD]}
    choices=$(COMP_POINT=$COMP_POINT COMP_LINE=$COMP_LINE "${words[0]}" -sc query=bash 2>/dev/null)
    if [ "$COMP_CWORD" -le 1 ]; then
        compopt +o nospace 2>/dev/null
    fi
    COMPREPLY=($(compgen -o nospace -o default -W "$choices" -- "$word"))
}
COMP_WORDBREAKS=${COMP_WORDBREAKS//=}
complete -o nospace -o default -F _mtsbench_completion mtsbench
"""

UNINSTALL = "complete -r mtsbench 2>/dev/null; unset -f _mtsbench_completion\n"

HYDRA_COMMANDS = ("run", "check")     # commands whose arguments are Hydra overrides
SHELLS = ("bash",)


def completion_main(argv: list[str], commands: list[str]) -> int:
    """``mtsbench completion bash`` (the install script) or ``mtsbench -sc
    install|uninstall|query=bash`` (``commands``: the CLI's command names, to complete);
    2 and one line for anything else."""
    from .errors import fail as _fail

    if argv and argv[0] in ("-sc", "--shell-completion"):
        argv = argv[1:]
    elif argv and argv[0].startswith("--shell-completion="):
        argv = [argv[0].partition("=")[2], *argv[1:]]
    if len(argv) == 1 and argv[0] in SHELLS:          # mtsbench completion bash
        argv = [f"install={argv[0]}"]
    action, _, shell = (argv[0] if len(argv) == 1 else "").partition("=")
    if action not in ("install", "uninstall", "query") or shell not in SHELLS:
        return _fail("shell completion: expected `mtsbench -sc install=bash` (or uninstall=bash, query=bash), "
                     "or `mtsbench completion bash`")
    if action == "install":
        sys.stdout.write(SCRIPT)
    elif action == "uninstall":
        sys.stdout.write(UNINSTALL)
    else:
        print(" ".join(query(os.environ.get("COMP_LINE", ""), os.environ.get("COMP_POINT"), commands)))
    return 0


def query(line: str, point: str | None, commands: list[str]) -> list[str]:
    """The words that can complete ``line`` (cut at ``point``, the cursor).

    >>> query("mtsbench re", None, ["run", "report", "evaluate"])
    ['report']
    >>> query("mtsbench report ", None, ["run", "report"])
    []
    """
    try:
        line = line[:int(point)] if point not in (None, "") else line
    except ValueError:
        pass
    words = line.split()
    new_word = not line or line[-1].isspace()
    if len(words) < 2 or (len(words) == 2 and not new_word):        # the command itself
        typed = words[1] if len(words) == 2 else ""
        return sorted(c for c in [*commands, "completion"] if c.startswith(typed))
    if words[1] not in HYDRA_COMMANDS:
        return []
    return _hydra_query(words[2:], new_word)


def _hydra_query(words: list[str], new_word: bool) -> list[str]:
    """Hydra's completion of the overrides ``words`` (the last one being typed unless
    ``new_word``): the words without ``=`` (scenario paths of ``check``) and the flags
    Hydra's parser does not know are left out."""
    import contextlib
    import io

    kept, skip = [], False
    typing = None if new_word or not words else words[-1]
    for w in (words if typing is None else words[:-1]):
        if skip:
            kept.append(w)
            skip = False
        elif w in ("--config-dir", "-cd"):
            kept.append(w)
            skip = True
        elif w in ("-m", "--multirun") or w.startswith("--config-dir=") or ("=" in w and not w.startswith("-")):
            kept.append(w)
    line = " ".join(["mtsbench", *kept, *([typing] if typing is not None else [])]) + (" " if typing is None else "")
    from .harness.hydra_app import app

    out = io.StringIO()
    saved_argv, saved_env = sys.argv, {k: os.environ.get(k) for k in ("COMP_LINE", "COMP_POINT")}
    sys.argv = ["mtsbench", "-sc", "query=bash"]
    os.environ["COMP_LINE"], os.environ["COMP_POINT"] = line, str(len(line))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            app()
    except (Exception, SystemExit):  # noqa: BLE001 - no completion rather than an error in the shell
        return []
    finally:
        sys.argv = saved_argv
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out.getvalue().split()
