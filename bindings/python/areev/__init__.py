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



def _store_error(args, errno, filename, filename2):
    """Rebuilds a pickled StoreError together with its errno."""
    error = StoreError(*args)
    error.errno = errno
    # Set only when there is one: OSError's str() shows any it has.
    if filename is not None:
        error.filename = filename
    if filename2 is not None:
        error.filename2 = filename2
    return error


def _reduce_store_error(self):
    # OSError pickles its arguments, and a StoreError carries its errno as an
    # attribute (str(e) stays the message alone), so it would come back as
    # None: multiprocessing and concurrent.futures pickle the exceptions they
    # pass between processes. The instance's dict (notes, attributes a caller
    # added) goes along, as with any exception.
    return (_store_error, (self.args, self.errno, self.filename, self.filename2),
            self.__dict__ or None)


StoreError.__reduce__ = _reduce_store_error

__all__ = ["Areev", "ClosedError", "NotFoundError", "StoreError", "ToolError"]
__version__ = "0.1.0"
