"""areev: Anthropic's memory tool (memory_20250818) backed by a versioned store.

    import json, areev
    m = areev.Areev("agent.db", ns="assistant")
    out = m.memory_tool(json.dumps({"command": "view", "path": "/memories"}))

Every write becomes a new version of the file; ``history()`` lists them and
``read(path, version=...)`` reads any of them. See docs/bindings.md.
"""

from ._areev import (  # noqa: F401  (re-exported API)
    Areev,
    ClosedError,
    NotFoundError,
    StoreError,
    ToolError,
)

__all__ = ["Areev", "ClosedError", "NotFoundError", "StoreError", "ToolError"]
__version__ = "0.1.0"
