"""Plumbing shared by several subsystems: worker pools, sockets, the SSE reader, text cuts, closing.

Private: nothing here is public API, and names may change without notice.
"""
