"""Sessions: durable conversations, shared by the threads and worker processes of an app.

The public names (``Session``, ``SessionState``, ``SqliteSession``) are
re-exported from :mod:`agent_smith`; import them from there.
"""
