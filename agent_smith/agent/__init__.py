"""The agent and its loop: turns, stop conditions, guards, events, tool sets, sub-agents.

The public names are re-exported from :mod:`agent_smith`; import them from there.
"""
