"""Built-in toolkits, secure by construction: files, search, shell, web fetch, todo.

Each toolkit is built from a policy object (its root, limits and
allowances) and gives a list of tools with ``tools()``; nothing is read
from the environment. See docs/toolkits.md for the threat model.
"""
