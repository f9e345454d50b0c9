"""The demo application: the ``agent-smith`` command, its REPL, demo tools and default models."""
