from tests.mcp.scripted import scripted

__all__ = ["scripted"]
