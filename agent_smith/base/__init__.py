"""The base layer's small modules: cancellation, the history's JSON codec and its field
readers, wire content parts, paused turns and plain-data settings.

Their public names are re-exported from :mod:`agent_smith`; import them from there.
"""
