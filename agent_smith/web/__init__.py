"""Agents in WSGI web apps: standard streaming protocols, approvals over HTTP, a dev UI.

:class:`~agent_smith.web.app.WebApp` is the WSGI application (re-exported
from :mod:`agent_smith` as ``WebApp``, imported only when used); the wire
protocols are :mod:`.vercel` (the Vercel AI SDK UI message stream) and
:mod:`.agui` (AG-UI). ``agent-smith web`` serves the demo agent with it.
See docs/web.md.
"""
