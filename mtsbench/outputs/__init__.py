"""A run's folder on disk: the scenario-by-scenario writer (``stream``), saved results,
attention timelines, the one-writer lock and atomic file writes. It writes and reads
files; it does not evaluate or report (``mtsbench.harness.finish`` does, after it).

May import: ``systems.base`` (the record types), ``scenario``, ``core``, ``errors``.
"""


def __getattr__(name):
    # the former module mtsbench.outputs wrote, evaluated and reported; that is now the harness's
    raise AttributeError(f"mtsbench.outputs.{name}: the former module mtsbench.outputs is now "
                         f"mtsbench.harness.finish (mtsbench.outputs is the run-folder package)")
