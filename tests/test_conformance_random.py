"""Seeded random sessions of memory-tool commands against the contract model.

Each seed draws a sequence of well-formed and malformed commands over a small
tree of names (so that edits, renames and deletes meet files and directories
that exist, that do not, and that lie inside each other), with bodies built
from a few repeated lines (so that `str_replace` finds text once, several
times or not at all), runs it through one `areev memtool --batch` process and
through contract_model.py, and requires the same content and error flag at
every step. Only inputs the contract decides are drawn: where it is silent
(the cases marked `amb` in contract_cases.py) the model only guesses.

A failure names the seed and the step; AREEV_RANDOM_TOOL_SEEDS (a count, or
`first:count`) and AREEV_RANDOM_TOOL_STEPS run more.
"""
import json
import os
import random

import pytest

from batch_util import run_batch
from contract_model import ROOT, Store, dispatch, run_model
from test_bindings_common import import_areev, python_step


def _seeds():
    spec = os.environ.get("AREEV_RANDOM_TOOL_SEEDS", "24")
    first, _, count = spec.rpartition(":")
    first = int(first) if first else 1
    return range(first, first + int(count))


STEPS = int(os.environ.get("AREEV_RANDOM_TOOL_STEPS", "150"))

NAMES = ["a", "b", "notes.md", "x.txt", "é", "e\u0301", "d 1", ".h", "node_modules", "a.b.c",
         "日記", "%41", "a\tb", "~", "-n", " lead", "..a", "...", "A",
         "n" * 255, "n" * 256, "é" * 128]  # 255 bytes fit a name; 256 do not
LINES = ["alpha", "beta", "beta gamma", "", "  indented", "tab\there", "ünï", "emoji 😀",
         "x", "xx", "line with a `tick`", "cr\r", "1. item", "- [ ] todo"]


def body(rng):
    shape = rng.random()
    if shape < 0.05:
        return ""
    if shape < 0.1:
        return "\n" * rng.randint(1, 3)
    if shape < 0.15:
        # Past 1 KiB, where listings switch to K sizes with one decimal.
        return rng.choice(LINES[:3]) * rng.randint(100, 700)
    text = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 12)))
    return text + ("\n" if rng.random() < 0.6 else "")


def spell(rng, key):
    """A path for `key` as an agent might write it: mostly plain, now and
    then with doubled slashes, `.` segments or a trailing slash."""
    segs = key[len(ROOT):].split("/")[1:]
    r = rng.random()
    if r < 0.8 or not segs:
        return key
    if r < 0.87:
        return ROOT + "".join(rng.choice(["/", "//"]) + s for s in segs)
    if r < 0.94:
        i = rng.randint(0, len(segs))
        return ROOT + "".join("/" + s for s in segs[:i] + ["."] + segs[i:])
    return key + "/"


def bad_path(rng, key):
    return rng.choice([
        key.replace(ROOT, "/memory", 1),
        key.replace(ROOT, "/memoriesX", 1),
        key + "/../x",
        ROOT + "/../etc/passwd",
        key.replace(ROOT, ROOT + "/%2e%2e", 1),
        key + "\\y",
        "memories/" + key[len(ROOT) + 1:],
        "",
    ])


class Session:
    """Draws commands that reach the model's current tree often."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.model = Store()

    def fresh_key(self):
        rng = self.rng
        base = ROOT
        if rng.random() < 0.6:
            dirs = [k for k, v in self.model.nodes.items() if v is None]
            base = rng.choice(dirs)
        depth = 1 if base.count("/") >= 4 else rng.randint(1, 2)
        return base + "".join("/" + rng.choice(NAMES) for _ in range(depth))

    def some_key(self, kind=None):
        rng = self.rng
        keys = [k for k, v in self.model.nodes.items() if k != ROOT and
                (kind is None or (kind == "file") == (v is not None))]
        if keys and rng.random() < 0.8:
            return rng.choice(keys)
        return self.fresh_key()

    def path(self, kind=None):
        rng = self.rng
        r = rng.random()
        if r < 0.03:
            return bad_path(rng, self.some_key(kind))
        if r < 0.05:
            return ROOT
        return spell(rng, self.some_key(kind))

    def fragment(self, key):
        """Text for `old_str`: part of the file (once or several times), or not in it."""
        rng = self.rng
        text = self.model.nodes.get(key)
        if not isinstance(text, str) or not text or rng.random() < 0.15:
            return rng.choice(LINES + ["absent", "", "alpha\nbeta"])
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.choice([1, 2, 4, 8, 30]))
        return text[i:j]

    def command(self):
        rng = self.rng
        r = rng.random()
        if r < 0.16:
            key = self.some_key("file")
            path = spell(rng, key) if rng.random() < 0.95 else bad_path(rng, key)
            cmd = {"command": "view", "path": path}
            if rng.random() < 0.5:
                text = self.model.nodes.get(key)
                n = text.count("\n") + 1 if isinstance(text, str) else 3
                a = rng.randint(-1, n + 2)
                cmd["view_range"] = [a, rng.choice([-1, -2, 0, a, a + 1, rng.randint(-1, n + 2)])]
            return cmd
        if r < 0.26:
            return {"command": "view", "path": self.path("dir")}
        if r < 0.44:
            path = self.path() if rng.random() < 0.3 else spell(rng, self.fresh_key())
            return {"command": "create", "path": path, "file_text": body(rng)}
        if r < 0.64:
            key = self.some_key("file")
            cmd = {"command": "str_replace", "path": spell(rng, key), "old_str": self.fragment(key)}
            if rng.random() < 0.9:
                cmd["new_str"] = rng.choice(["", "NEW", "two\nlines", "é😀", "beta"])
            return cmd
        if r < 0.76:
            key = self.some_key("file")
            text = self.model.nodes.get(key)
            n = text.count("\n") + 1 if isinstance(text, str) else 2
            return {"command": "insert", "path": spell(rng, key),
                    "insert_line": rng.randint(-1, n + 1),
                    "insert_text": rng.choice(["ins", "ins\n", "a\nb\n", "", "\n", "ü"])}
        if r < 0.83:
            return {"command": "delete", "path": self.path()}
        if r < 0.95:
            old = self.path()
            new = self.path() if rng.random() < 0.3 else spell(rng, self.fresh_key())
            return {"command": "rename", "old_path": old, "new_path": new}
        return self.malformed()

    def malformed(self):
        """A command missing a required parameter, or with one of the wrong type."""
        rng = self.rng
        cmd = rng.choice([
            {"command": "create", "path": spell(rng, self.fresh_key())},
            {"command": "create", "path": spell(rng, self.fresh_key()), "file_text": 7},
            {"command": "str_replace", "path": spell(rng, self.some_key("file"))},
            {"command": "insert", "path": spell(rng, self.some_key("file")), "insert_text": "t"},
            {"command": "insert", "path": spell(rng, self.some_key("file")), "insert_line": "1",
             "insert_text": "t"},
            {"command": "rename", "old_path": spell(rng, self.some_key())},
            {"command": "view"},
            {"command": "delete", "path": ["/memories/a"]},
            {"command": "undo", "path": ROOT},
            {"path": ROOT},
        ])
        return cmd

    def draw(self, steps):
        cmds = []
        for _ in range(steps):
            cmd = self.command()
            # Keep the generator's tree in step with the model's answers.
            dispatch(self.model, cmd)
            cmds.append(cmd)
        return cmds


def described(cmd):
    return json.dumps(cmd, ensure_ascii=False)[:300]


@pytest.mark.parametrize("seed", list(_seeds()))
def test_random_sessions_answer_as_the_model(areev_bin, tmp_path, seed):
    cmds = Session(seed).draw(STEPS)
    want = run_model(cmds)
    ascii_only = seed % 2 == 0
    lines = [json.dumps(c, ensure_ascii=ascii_only).encode("utf-8") for c in cmds]
    results = run_batch(areev_bin, tmp_path / "agent.db", lines)
    got = [(r["content"], r["is_error"]) for r in results]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"seed {seed} step {i}: {described(cmds[i])}"


@pytest.mark.parametrize("seed", list(_seeds())[:6])
def test_random_sessions_through_python_answer_as_the_model(tmp_path, seed):
    # The same sessions through the Python binding.
    cmds = Session(seed).draw(STEPS)
    want = run_model(cmds)
    m = import_areev().Areev(str(tmp_path / "agent.db"))
    try:
        for i, cmd in enumerate(cmds):
            assert python_step(m, cmd) == want[i], f"seed {seed} step {i}: {described(cmd)}"
    finally:
        m.close()


def test_the_sessions_reach_every_outcome():
    # The generator is only worth its seeds if it reaches each kind of answer.
    answers = []
    for seed in _seeds():
        answers += run_model(Session(seed).draw(STEPS))
    text = [a for a, _ in answers]
    for needle in ["File created successfully", "Multiple occurrences", "did not appear verbatim",
                   "has been edited", "Successfully deleted", "Successfully renamed",
                   "already exists", "does not exist", "Invalid `insert_line`", "would escape",
                   "is a file, not a directory", "subdirectory of itself", "with line numbers",
                   "up to 2 levels deep", "is required for command", "Unknown command",
                   "K\t/memories/", "is too long"]:
        assert any(needle in t for t in text), needle
    assert sum(err for _, err in answers) < 0.6 * len(answers)
