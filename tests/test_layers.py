"""Imports point down the layers (DESIGN §19.1): no module imports one above it.

Every module of the package is parsed with ``ast`` and every import in it
counts: module level, under ``if TYPE_CHECKING:``, and inside functions. A
module's layer is the one of its first name under ``agent_smith``; a new
folder or top-level module must be added to :data:`LAYERS` (the test says
so), which is where a new one is placed on purpose, not by accident.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agent_smith"

# Top to bottom. A module may import its own layer and the layers below it.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("public API", frozenset({"__init__"})),  # agent_smith/__init__.py re-exports everything
    (
        "applications",
        frozenset({"cli", "web", "batch", "evals", "notebook", "durable", "__main__"}),
    ),
    ("agent", frozenset({"agent", "a2a"})),  # a2a: remote agents as tools
    ("tracing", frozenset({"tracing", "metrics"})),  # observers the layers below call
    (
        "services",
        frozenset({"llm", "tools", "toolkits", "mcp", "skills", "sessions", "memory", "steps"}),
    ),
    (
        "base",
        frozenset(
            {
                "messages",
                "base",
                "errors",
                "runtime",
                "logs",
                "observer",
            }
        ),
    ),
    ("plumbing", frozenset({"_internal", "_lazy_names", "_version"})),
)

_RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    """``agent_smith.llm.client`` for ``agent_smith/llm/client.py`` (packages by their folder)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, module: str, *, package: bool) -> Iterator[tuple[str, int]]:
    """Every ``agent_smith`` name ``module``'s source imports, absolute, with its line.

    ``from x import y`` yields ``x.y`` (``y`` may be a submodule or a name
    in ``x``: either way it is ``x``'s layer's or the submodule's).
    """
    here = module.split(".") if package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                yield f"{source}.{alias.name}", node.lineno


def layer(name: str) -> str | None:
    """The layer key of an ``agent_smith`` name: its first part below the package."""
    parts = name.split(".")
    if parts[0] != "agent_smith":
        return None
    if len(parts) == 1 or (len(parts) == 2 and parts[1] not in _RANK and _is_root_name(parts[1])):
        return "__init__"  # the package itself (``from agent_smith import X``)
    return parts[1]


def _is_root_name(name: str) -> bool:
    """Whether ``agent_smith.<name>`` is a name of the package root, not a module or folder."""
    return not (PACKAGE / f"{name}.py").exists() and not (PACKAGE / name).is_dir()


def upward_edges(module: str, source: str, *, package: bool = False) -> list[str]:
    """The imports in ``source`` (module ``module``) that point to a higher layer, described."""
    own = "__init__" if module == "agent_smith" else layer(module)
    assert own is not None
    edges: dict[int, str] = {}
    for target, line in imported(ast.parse(source), module, package=package):
        other = layer(target)
        if other is None or other == own:
            continue
        if _RANK[other] < _RANK[own]:
            edges.setdefault(line, f"{module}:{line} imports {target} ({other} is above {own})")
    return list(edges.values())


def _edges(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    return upward_edges(module_name(path), source, package=path.name == "__init__.py")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(
        {module_name(p) for p in _modules() if layer(module_name(p)) not in _RANK} - {"agent_smith"}
    )
    assert not unplaced, f"add these to LAYERS in tests/test_layers.py: {unplaced}"


def test_no_module_imports_a_layer_above_its_own() -> None:
    edges = [edge for path in _modules() for edge in _edges(path)]
    assert not edges, "\n".join(edges)


@pytest.mark.parametrize(
    "source",
    [
        "from ..agent.agent import Agent\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..tracing import otel\n",
        "def f():\n    import agent_smith.cli.main\n",
        "from .. import __version__\n",
    ],
)
def test_an_upward_import_is_found_wherever_it_hides(source: str) -> None:
    assert len(upward_edges("agent_smith.llm.planted", source)) == 1


def test_imports_down_and_sideways_are_allowed() -> None:
    source = (
        "from ..errors import ConfigError\nfrom ..tools.base import Tool\n"
        "from .._internal.pool import WorkerPool\nfrom . import events\nimport requests\n"
    )
    assert upward_edges("agent_smith.llm.planted", source) == []


def test_the_top_level_shows_at_most_twelve_modules() -> None:
    """The package's face stays small: the base layer's small modules live in ``base/``."""
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(modules) <= 12, modules
