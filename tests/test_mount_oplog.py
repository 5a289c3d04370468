"""The op-log replays in order (docs/cli.md, `areev log`): applied entry by
entry to an empty tree, by path and by node id, it never meets a missing
file, an occupied rename target or a non-empty rmdir, and ends with the tree
the mount shows. Chain-only entries (`vacate`, `revive`, `purge`, and a
`discard` that names the file's new place) change no path."""
import json
import os
import subprocess

from mount_util import *  # noqa: F401,F403
from mount_util import areev, memtool

pytestmark = fuse_test_marker  # noqa: F405

ROOT = "/memories"


def parent_of(key):
    return key.rsplit("/", 1)[0]


def replay(entries):
    """Applies op-log entries to a tree {key: (kind, node id)}; returns the
    tree and the entries that could not be applied as they stand."""
    tree = {ROOT: ("dir", None)}
    bad = []

    def fail(entry, why):
        bad.append(f"seq {entry['seq']} {entry['op']} {entry['subject']}"
                   f"{' -> ' + entry['new_subject'] if entry['new_subject'] else ''}: {why}")

    def same_node(entry, key):
        held = tree[key][1]
        return entry["node_id"] == 0 or held is None or held == entry["node_id"]

    def make(entry, kind):
        key = entry["subject"]
        if key in tree:
            return fail(entry, "the name is taken")
        if tree.get(parent_of(key), ("",))[0] != "dir":
            return fail(entry, "no directory to make it in")
        tree[key] = (kind, entry["node_id"])

    def existing(entry, kinds):
        key = entry["subject"]
        if key not in tree or tree[key][0] not in kinds:
            fail(entry, "nothing of that kind there")
            return False
        if not same_node(entry, key):
            fail(entry, f"node {tree[key][1]} is there")
            return False
        return True

    for e in entries:
        op, key, new = e["op"], e["subject"], e["new_subject"]
        if op in ("add", "supersede") and e["node_id"] == 0:
            continue  # a fact's: no file
        if op == "mkdir":
            make(e, "dir")
        elif op == "symlink":
            make(e, "link")
        elif op in ("create", "restore"):
            make(e, "file")
        elif op == "add":  # a new chain: for a file the mount made, or a new file
            if key not in tree:
                make(e, "file")
            else:
                existing(e, ("file",))
        elif op in ("write", "supersede", "revive", "vacate"):
            existing(e, ("file",))
        elif op == "setattr":
            existing(e, ("file", "dir", "link"))
        elif op == "discard" and new:  # the chain goes, the file moves on
            existing(e, ("file",))
        elif op in ("delete", "unlink", "discard"):
            if existing(e, ("file", "link")):
                del tree[key]
        elif op == "rmdir":
            if existing(e, ("dir",)):
                if any(k.startswith(key + "/") for k in tree):
                    fail(e, "the directory is not empty")
                del tree[key]
        elif op == "rename":
            if not existing(e, ("file", "dir", "link")):
                continue
            if new in tree:
                fail(e, "the target is taken")
            if tree.get(parent_of(new), ("",))[0] != "dir":
                fail(e, "no directory to move it to")
            for k in sorted(k for k in tree if k == key or k.startswith(key + "/")):
                tree[new + k[len(key):]] = tree.pop(k)
        elif op != "purge":
            fail(e, "an op this replay does not know")
    return tree, bad


def mount_tree(path):
    """{key: kind} of what the mount lists."""
    out = {}
    for top, dirs, files in os.walk(path):
        rel = os.path.relpath(top, path)
        base = ROOT if rel == "." else f"{ROOT}/{rel}"
        for name in dirs + files:
            full = os.path.join(top, name)
            kind = "link" if os.path.islink(full) else "dir" if os.path.isdir(full) else "file"
            out[f"{base}/{name}"] = kind
    return out


def test_the_op_log_of_mount_and_memory_tool_changes_replays_in_order(mnt):
    def tool(**cmd):
        assert not memtool(mnt.db, cmd)["is_error"], cmd

    p = mnt.path
    for name in ("a.md", "b.md", "d.md", "dir/e.md"):
        tool(command="create", path=f"{ROOT}/{name}", file_text=f"{name} one\n")
    os.rename(p / "a.md", p / "b.md")  # a file with a history over another
    subprocess.run(["sed", "-i", "s/one/two/", str(p / "b.md")], check=True)  # a temp copy over it
    (p / "c.md.tmp").write_text("c\n")
    os.rename(p / "c.md.tmp", p / "c.md")  # a temp file to a new versioned name
    (p / "new.md").write_text("d two\n")
    subprocess.run(["mv", "-b", str(p / "new.md"), str(p / "d.md")], check=True)  # d.md -> d.md~
    os.rename(p / "dir", p / "moved")
    (p / "moved" / "f.md").write_text("f\n")
    os.unlink(p / "moved" / "e.md")
    os.symlink("b.md", p / "link")
    tool(command="rename", old_path=f"{ROOT}/moved", new_path=f"{ROOT}/kept")
    (p / "gone").mkdir()
    (p / "gone" / "g.md").write_text("g\n")
    tool(command="delete", path=f"{ROOT}/gone")

    assert (p / "b.md").read_text() == "a.md two\n" and (p / "d.md").read_text() == "d two\n"
    entries = json.loads(areev(mnt.db, "log", "--json").stdout)
    tree, bad = replay(entries)
    assert bad == [], "\n".join(bad)
    assert {k: kind for k, (kind, _) in tree.items() if k != ROOT} == mount_tree(p)
