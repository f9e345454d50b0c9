"""Evals: measure an agent on a dataset of cases, on threads or Dask, with reports to look at.

A :class:`Dataset` of :class:`Case` values (JSONL or YAML files, with a JSON
Schema), evaluators that judge each run (:class:`Equals`,
:class:`Contains`, :class:`Regex`, :class:`OutputValid`, :class:`ToolCalls`,
:class:`Limits`, :class:`LlmJudge`, :class:`Check` for a Python function),
:func:`run_eval`/:func:`evaluate` to run every case ``repeat`` times through
the batch machinery, and an :class:`EvalReport` (terminal table, JSON,
self-contained HTML, Jupyter) that :meth:`~EvalReport.compare` sets against
another. See ``docs/evals.md``.
"""

from .case import Case
from .case_run import CaseRun
from .compare import Change, ReportDiff
from .dataset import Dataset, dataset_schema
from .evaluator import Check, EvalContext, Evaluator
from .judge import JudgeVerdict, LlmJudge
from .limits import Limits
from .registry import EVALUATORS, evaluator_from_dict
from .report import CaseReport, EvalReport, RunReport
from .run import EvalRun, evaluate, run_eval
from .testing import assert_eval
from .text_checks import Contains, Equals, OutputValid, Regex
from .trajectory import ExpectedCall, ToolCalls
from .verdict import EvalResult

__all__ = [
    "EVALUATORS",
    "Case",
    "CaseReport",
    "CaseRun",
    "Change",
    "Check",
    "Contains",
    "Dataset",
    "Equals",
    "EvalContext",
    "EvalReport",
    "EvalResult",
    "EvalRun",
    "Evaluator",
    "ExpectedCall",
    "JudgeVerdict",
    "Limits",
    "LlmJudge",
    "OutputValid",
    "Regex",
    "ReportDiff",
    "RunReport",
    "ToolCalls",
    "assert_eval",
    "dataset_schema",
    "evaluate",
    "evaluator_from_dict",
    "run_eval",
]
