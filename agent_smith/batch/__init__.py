"""Batch runs: the same agent over many inputs, on local threads or a Dask cluster.

:class:`AgentSpec` is the picklable recipe, :func:`run_batch` the driver that
yields a :class:`BatchResult` per input, with durable, resumable results
files (:func:`read_results` reads one back). Nothing here imports Dask: pass
any ``concurrent.futures.Executor``, such as ``Client.get_executor()``.
"""

from .inputs import BatchInput, read_inputs
from .result import BatchResult, ItemError
from .run import BatchRun, run_batch
from .sink import read_results
from .spec import AgentSpec

__all__ = [
    "AgentSpec",
    "BatchInput",
    "BatchResult",
    "BatchRun",
    "ItemError",
    "read_inputs",
    "read_results",
    "run_batch",
]
