"""The package version, in the bottom layer so that any module may read it.

``setup.cfg`` reads it from here (``attr: agent_smith._version.__version__``)
and ``agent_smith.__version__`` re-exports it.
"""

__version__ = "0.1.0"
