"""Dataset: the cases of an eval and the evaluators every case gets, in JSONL or YAML.

Two file forms, picked by the suffix:

* JSON Lines (``.jsonl``): one case object per line; an optional first line
  ``{"dataset": {"name": ..., "evaluators": [...]}}`` names the dataset and
  its evaluators. Blank lines are skipped.
* YAML (``.yaml``, ``.yml``; PyYAML, the ``evals`` extra) or JSON
  (``.json``): one document ``{"name": ..., "evaluators": [...], "cases":
  [...]}``.

The JSON Schema of the document (and, as ``$defs/case``, of a JSONL line)
ships with the package: :func:`dataset_schema` returns it, and
``agent_smith/evals/dataset.schema.json`` is the file to point an editor at.
A case that cannot be read (not JSON, a missing id, an unknown evaluator)
does not stop the others: it is kept in :attr:`Dataset.invalid` as an
EvalError naming the line and the case, and the run reports it as failed.
``strict=True`` raises the first one instead.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .._internal import json_input
from .._internal.extras import install_hint
from ..base.named_file import read_named_file
from ..errors import AgentSmithError, ConfigError, EvalError
from .case import Case
from .evaluator import Evaluator
from .registry import evaluator_from_dict

_YAML = (".yaml", ".yml")
_NEEDS_YAML = f"YAML datasets need PyYAML: {install_hint('evals')}"


@dataclass(frozen=True)
class Dataset:
    """Cases, the evaluators applied to every case, a name, and the entries that were invalid."""

    cases: tuple[Case, ...]
    evaluators: tuple[Evaluator, ...] = ()
    name: str = "eval"
    invalid: tuple[EvalError, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        for attr in ("cases", "evaluators", "invalid"):
            if not isinstance(getattr(self, attr), tuple):
                object.__setattr__(self, attr, tuple(getattr(self, attr)))
        seen: set[str] = set()
        for case in self.cases:
            if not isinstance(case, Case):
                raise ConfigError("Dataset.cases must hold Case values")
            if case.id in seen:
                raise EvalError(f"case {case.id}: the id is used twice", case=case.id)
            seen.add(case.id)
        if not all(isinstance(e, Evaluator) for e in self.evaluators):
            raise ConfigError("Dataset.evaluators must hold Evaluator values")

    # -- reading -------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, strict: bool = False) -> Dataset:
        """Read a ``.jsonl``, ``.yaml``/``.yml`` or ``.json`` dataset (see the module doc)."""
        target = Path(path)
        text = read_named_file(path, "dataset")
        suffix = target.suffix.lower()
        if suffix == ".jsonl":
            dataset = _from_lines(text, str(target))
        else:
            dataset = cls.from_dict(_document(text, str(target), yaml=suffix in _YAML), str(target))
        if strict and dataset.invalid:
            raise dataset.invalid[0]
        return dataset

    @classmethod
    def from_dict(cls, data: object, where: str = "dataset") -> Dataset:
        """The dataset of a document ``{"name", "evaluators", "cases"}``."""
        if not isinstance(data, Mapping):
            raise EvalError(f"{where}: a dataset must be an object with 'cases'", where=where)
        unknown = sorted(str(k) for k in data if k not in ("name", "evaluators", "cases"))
        if unknown:
            raise EvalError(f"{where}: unknown key {unknown[0]!r}", where=where)
        cases = data.get("cases", [])
        if not isinstance(cases, list):
            raise EvalError(f"{where}: 'cases' must be a list", where=where)
        header = {k: data[k] for k in ("name", "evaluators") if k in data}
        entries = [(f"{where}: cases[{i}]", raw) for i, raw in enumerate(cases)]
        return _assemble(header, entries, where)

    # -- writing -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The document form (what a ``.yaml`` or ``.json`` dataset holds)."""
        return {
            "name": self.name,
            "evaluators": [e.to_dict() for e in self.evaluators],
            "cases": [c.to_dict() for c in self.cases],
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the dataset in the form its suffix names (``.jsonl``, ``.yaml``, ``.json``)."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".jsonl":
            header = {"dataset": {"name": self.name, "evaluators": self.to_dict()["evaluators"]}}
            lines = [header, *(c.to_dict() for c in self.cases)]
            text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        elif suffix in _YAML:
            text = _yaml().safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)
        else:
            text = json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as err:
            raise ConfigError(f"cannot write dataset {os.fspath(path)!r}: {err}") from err


def dataset_schema() -> dict[str, Any]:
    """The JSON Schema of a dataset document (a JSONL line is its ``$defs/case``)."""
    return dict(_schema())


@functools.lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("dataset.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _yaml() -> Any:
    try:
        return importlib.import_module("yaml")  # by name: PyYAML ships no type stubs
    except ImportError as err:
        raise ConfigError(_NEEDS_YAML) from err


def _document(text: str, where: str, *, yaml: bool) -> object:
    if yaml:
        parser = _yaml()
        try:
            return parser.safe_load(text)
        except parser.YAMLError as err:
            raise EvalError(f"{where}: not valid YAML ({err})", where=where) from err
    try:
        return json_input.loads(text)
    except json.JSONDecodeError as err:
        raise EvalError(f"{where}:{err.lineno}: not valid JSON ({err.msg})", where=where) from err


def _from_lines(text: str, where: str) -> Dataset:
    header: Mapping[str, Any] = {}
    entries: list[tuple[str, object]] = []
    problems: list[EvalError] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{where}:{number}"
        try:
            raw = json_input.loads(line)
        except json.JSONDecodeError as err:
            problems.append(EvalError(f"{at}: not valid JSON ({err.msg})", where=at))
            continue
        if isinstance(raw, Mapping) and "dataset" in raw and not entries and not header:
            if not isinstance(raw["dataset"], Mapping):
                raise EvalError(f"{at}: the 'dataset' line must hold an object", where=at)
            header = raw["dataset"]
            continue
        entries.append((at, raw))
    dataset = _assemble(header, entries, where)
    by_line = sorted([*problems, *dataset.invalid], key=lambda e: _line_of(e.where))
    return Dataset(dataset.cases, dataset.evaluators, dataset.name, tuple(by_line))


def _line_of(where: str) -> int:
    """The line number at the end of ``where`` (``file:12``), to list problems in file order."""
    number = where.rpartition(":")[2]
    return int(number) if number.isdigit() else 0


def _assemble(
    header: Mapping[str, Any], entries: Sequence[tuple[str, object]], where: str
) -> Dataset:
    name = header.get("name", Path(where).stem)
    if not isinstance(name, str):
        raise EvalError(f"{where}: the dataset's 'name' must be a string", where=where)
    raw_evaluators = header.get("evaluators", [])
    if not isinstance(raw_evaluators, list):
        raise EvalError(f"{where}: the dataset's 'evaluators' must be a list", where=where)
    try:
        evaluators = [evaluator_from_dict(e) for e in raw_evaluators]
    except AgentSmithError as err:
        raise EvalError(f"{where}: dataset evaluators: {err}", where=where) from err
    cases, invalid = _read_cases(entries)
    return Dataset(tuple(cases), tuple(evaluators), name, tuple(invalid))


def _read_cases(entries: Iterable[tuple[str, object]]) -> tuple[list[Case], list[EvalError]]:
    cases: list[Case] = []
    invalid: list[EvalError] = []
    seen: set[str] = set()
    for at, raw in entries:
        try:
            case = Case.from_dict(raw, where=at)
        except EvalError as err:
            invalid.append(err)
            continue
        if case.id in seen:
            invalid.append(EvalError(f"{at}: case {case.id}: the id is used twice", case=case.id))
            continue
        seen.add(case.id)
        cases.append(case)
    return cases, invalid
