"""Built-in toolkits, secure by construction: files, search, shell, web fetch, todo.

Each toolkit is built from a policy object (its root, limits and
allowances; nothing is read from the environment) and gives its tools with
``tools()``. Every tool declares whether it only reads
(``ToolOptions.read_only``) and reports failures as error results the model
reads. The threat model and what each toolkit guarantees: docs/toolkits.md.
"""

from .command_classifier import Classification, CommandKind, classify
from .files import FilesPolicy, FilesToolkit
from .lexical_index import LexicalIndex
from .search import SearchPolicy, SearchToolkit
from .shell import ShellPolicy, ShellToolkit
from .todo import TodoItem, TodoPolicy, TodoToolkit
from .web import WebPolicy, WebToolkit
from .workspace import Workspace, WorkspaceChanges

__all__ = [
    "Classification",
    "CommandKind",
    "FilesPolicy",
    "FilesToolkit",
    "LexicalIndex",
    "SearchPolicy",
    "SearchToolkit",
    "ShellPolicy",
    "ShellToolkit",
    "TodoItem",
    "TodoPolicy",
    "TodoToolkit",
    "WebPolicy",
    "WebToolkit",
    "Workspace",
    "WorkspaceChanges",
    "classify",
]
