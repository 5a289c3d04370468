"""An independent model of the memory-tool contract (the contract's section 11,
C1-C22, and docs/memtool.md's decisions where the contract is silent), written
from their text rather than from areev's code, in plain Python over a dict of
paths. test_conformance_model.py replays contract_cases.py through it and
through `areev memtool --batch` and compares every result byte for byte.

The contract's Python-semantics pieces (numbered lines, the edit snippet,
the line list of an ambiguous str_replace, insert's line counting, the
messages built from a path) come from memtool/testdata/make_extra_vectors.py,
which writes our extra vectors from the same text.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "memtool" / "testdata"))
from make_extra_vectors import (DIR_HEADER, ambiguous, escape, param,  # noqa: E402
                                python_insert, snippet, view_file)

ROOT = "/memories"

class ToolErr(Exception):
    pass

def fmt_size(n):
    if n == 0: return "0B"
    units = ["B", "K", "M", "G"]
    i = min((n.bit_length() - 1) // 10, 3)
    v = n / (1024 ** i)
    if v == int(v): return f"{int(v)}{units[i]}"
    return f"{v:.1f}{units[i]}"

def blen(s): return len(s.encode("utf-8", "surrogatepass"))
def bkey(s): return s.encode("utf-8", "surrogatepass")

def is_int(x): return isinstance(x, int) and not isinstance(x, bool)

class Store:
    def __init__(self):
        self.nodes = {ROOT: None}   # key -> None for dir, str for file

    # ---- paths (C4-C8)
    def key(self, P):
        if not P.startswith("/memories"):
            raise ToolErr(f"Path must start with /memories, got: {P}")
        rest = P[len("/memories"):]
        low = P.lower()
        segs = [s for s in rest.split("/") if s not in ("", ".")]
        if ((rest and rest[0] != "/") or "\\" in P or "\x00" in P or "%2e" in low
                or "%2f" in low or "%5c" in low or ".." in segs):
            raise ToolErr(escape(P))
        return ROOT + "".join("/" + s for s in segs)

    @staticmethod
    def too_long(k):
        # docs/memtool.md, beyond the contract: names over 255 bytes and keys
        # over 4096 bytes cannot be stored (the mount must show every file).
        return blen(k) > 4096 or any(blen(s) > 255 for s in k.split("/"))

    def isdir(self, k): return k in self.nodes and self.nodes[k] is None
    def isfile(self, k): return k in self.nodes and self.nodes[k] is not None

    def ancestors(self, k):  # strictly below root, excluding k
        segs = k[len(ROOT):].split("/")[1:]
        out = []
        for i in range(1, len(segs)):
            out.append(ROOT + "".join("/" + s for s in segs[:i]))
        return out

    def children(self, k):
        pre = k + "/"
        return sorted([c for c in self.nodes if c.startswith(pre) and "/" not in c[len(pre):]],
                      key=lambda c: bkey(c[len(pre):]))

    # ---- commands
    def view(self, P, vr):
        k = self.key(P)
        if k not in self.nodes:
            raise ToolErr(f"The path {P} does not exist. Please provide a valid path.")
        if self.isdir(k):
            out = [DIR_HEADER.format(P, P)]
            def walk(d, rel, depth):
                for c in self.children(d):
                    name = c.rsplit("/", 1)[1]
                    if name.startswith(".") or name == "node_modules": continue
                    r = rel + name
                    if self.isdir(c):
                        out.append(f"4K\t{P}/{r}/")
                        if depth < 2: walk(c, r + "/", depth + 1)
                    else:
                        out.append(f"{fmt_size(blen(self.nodes[c]))}\t{P}/{r}")
            walk(k, "", 1)
            return "\n".join(out)
        lines = self.nodes[k].split("\n")
        if len(lines) > 999999:
            raise ToolErr(f"File {P} exceeds maximum line limit of 999,999 lines.")
        if isinstance(vr, list) and len(vr) == 2 and all(is_int(x) for x in vr):
            return view_file(P, self.nodes[k], vr[0], vr[1])
        return view_file(P, self.nodes[k])

    def create(self, P, text):
        k = self.key(P)
        if self.isdir(k):
            raise ToolErr(f"File {P} already exists")
        for a in self.ancestors(k):
            if self.isfile(a):
                raise ToolErr(f"A parent of {P} is a file, not a directory")
        # The store's limits come after the contract's own checks.
        if self.too_long(k):
            raise ToolErr(f"Path {P} is too long")
        for a in self.ancestors(k):
            self.nodes.setdefault(a, None)
        self.nodes[k] = text
        return f"File created successfully at: {P}"

    def str_replace(self, P, old, new):
        k = self.key(P)
        if not self.isfile(k):
            raise ToolErr(f"The path {P} does not exist. Please provide a valid path.")
        if new is None: new = ""
        if not isinstance(new, str): return "<<AMBIGUOUS: new_str wrong type>>"
        c = self.nodes[k]
        cnt = c.count(old)
        if cnt == 0:
            raise ToolErr(f"No replacement was performed, old_str `{old}` did not appear verbatim in {P}.")
        if cnt > 1:
            raise ToolErr(ambiguous(c, old))
        idx = c.find(old)
        self.nodes[k] = c[:idx] + new + c[idx + len(old):]
        return snippet(self.nodes[k], c[:idx].count("\n"))

    def insert(self, P, line, text):
        k = self.key(P)
        if not self.isfile(k):
            raise ToolErr(f"The path {P} does not exist")
        c = self.nodes[k]
        N = 0 if c == "" else c.count("\n") + (0 if c.endswith("\n") else 1)
        if line < 0 or line > N:
            raise ToolErr(f"Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, {N}]")
        self.nodes[k] = python_insert(c, line, text)
        return f"The file {P} has been edited."

    def delete(self, P):
        k = self.key(P)
        if k == ROOT: raise ToolErr("Cannot delete the /memories directory itself")
        if k not in self.nodes: raise ToolErr(f"The path {P} does not exist")
        for c in list(self.nodes):
            if c == k or c.startswith(k + "/"): del self.nodes[c]
        return f"Successfully deleted {P}"

    def rename(self, O, N):
        ko = self.key(O); kn = self.key(N)
        if ko == ROOT: raise ToolErr("Cannot rename the /memories directory itself")
        if kn in self.nodes: raise ToolErr(f"The destination {N} already exists")
        if ko not in self.nodes: raise ToolErr(f"The path {O} does not exist")
        if kn.startswith(ko + "/"): raise ToolErr(f"Cannot rename {O} to a subdirectory of itself, {N}")
        for a in self.ancestors(kn):
            if self.isfile(a): raise ToolErr(f"A parent of {N} is a file, not a directory")
        if any(self.too_long(kn + c[len(ko):]) for c in self.nodes if c == ko or c.startswith(ko + "/")):
            raise ToolErr(f"Path {N} is too long")
        for a in self.ancestors(kn): self.nodes.setdefault(a, None)
        moved = {}
        for c in list(self.nodes):
            if c == ko or c.startswith(ko + "/"):
                moved[kn + c[len(ko):]] = self.nodes.pop(c)
        self.nodes.update(moved)
        return f"Successfully renamed {O} to {N}"

REQ = {"view": ["path"], "create": ["path", "file_text"], "str_replace": ["path", "old_str"],
       "insert": ["path", "insert_line", "insert_text"], "delete": ["path"], "rename": ["old_path", "new_path"]}

def dispatch(st, cmd):
    try:
        if "command" not in cmd: raise ToolErr("Parameter `command` is required")
        c = cmd["command"]
        if c not in REQ: raise ToolErr(f"Unknown command: {c}")
        for p in REQ[c]:
            v = cmd.get(p)
            if not (is_int(v) if p == "insert_line" else isinstance(v, str)):
                raise ToolErr(param(p, c))
            # A path is checked as soon as it is found, before the parameters
            # after it (docs/memtool.md, "Processing order", step 6).
            if p in ("path", "old_path", "new_path"): st.key(v)
        if c == "view": return (st.view(cmd["path"], cmd.get("view_range")), False)
        if c == "create": return (st.create(cmd["path"], cmd["file_text"]), False)
        if c == "str_replace": return (st.str_replace(cmd["path"], cmd["old_str"], cmd.get("new_str")), False)
        if c == "insert": return (st.insert(cmd["path"], cmd["insert_line"], cmd["insert_text"]), False)
        if c == "delete": return (st.delete(cmd["path"]), False)
        if c == "rename": return (st.rename(cmd["old_path"], cmd["new_path"]), False)
    except ToolErr as e:
        return ("Error: " + str(e), True)

def run_model(inputs):
    st = Store()
    return [dispatch(st, c) for c in inputs]
