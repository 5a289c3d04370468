"""The Python tool loop from the product docs, run verbatim against the binding.

Only the Anthropic client is replaced: a scripted stand-in replays realistic
assistant turns (tool_use blocks shaped like the SDK's) and records the
tool_result blocks the loop sends back, which must equal what the memory tool
returns for the same commands through `areev memtool`.
"""
import json
import pathlib
import sys
import types

import pytest

from test_bindings_common import ROOT, areev_cli, cli_batch, import_areev

# The loop exactly as the product brief prints it.
LOOP = '''\
import json, areev
from anthropic import Anthropic

m = areev.Areev("agent.db", ns="assistant")
client = Anthropic()

messages = [{"role": "user", "content": "Remember: I'm vegetarian."}]
while True:
    resp = client.messages.create(
        model="claude-sonnet-5",
        max_tokens=1024,
        tools=[{"type": "memory_20250818", "name": "memory"}],
        messages=messages,
    )
    if resp.stop_reason != "tool_use":
        break
    results = []
    for block in resp.content:
        if block.type == "tool_use" and block.name == "memory":
            try:
                out = m.memory_tool(json.dumps(block.input))   # ← Areev backend
            except ValueError as e:
                out = f"Error: {e}"
            results.append({"type": "tool_result", "tool_use_id": block.id,
                            "content": out})
    messages.append({"role": "assistant", "content": resp.content})
    messages.append({"role": "user", "content": results})
'''

# What the model "says", turn by turn: lists of tool_use inputs.
TURNS = [
    [{"command": "view", "path": "/memories"}],
    [{"command": "create", "path": "/memories/preferences.md",
      "file_text": "# User preferences\n- Diet: vegetarian\n"}],
    [{"command": "str_replace", "path": "/memories/preferences.md",
      "old_str": "Diet: vegan", "new_str": "Diet: vegetarian"},
     {"command": "view", "path": "/memories/preferences.md"}],
    [{"command": "insert", "path": "/memories/preferences.md", "insert_line": 2,
      "insert_text": "- Confirmed on request\n"}],
    [{"command": "view", "path": "/memories/../secrets"}],
    [{"command": "view", "path": "/memories"}],
]

EXPECTED_SAMPLES = {
    0: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
       "items and node_modules:\n4K\t/memories",
    1: "File created successfully at: /memories/preferences.md",
    2: "Error: No replacement was performed, old_str `Diet: vegan` did not appear verbatim in "
       "/memories/preferences.md.",
    3: "Here's the content of /memories/preferences.md with line numbers:\n     1\t# User "
       "preferences\n     2\t- Diet: vegetarian\n     3\t",
    4: "The file /memories/preferences.md has been edited.",
    5: "Error: Path /memories/../secrets would escape /memories directory",
}


class ScriptedMessages:
    """Stands in for client.messages: replays TURNS, records what it is sent."""

    def __init__(self, turns):
        self.turns = list(turns)
        self.calls = []

    def create(self, *, model, max_tokens, tools, messages):
        assert tools == [{"type": "memory_20250818", "name": "memory"}]
        assert model and max_tokens > 0
        self.calls.append([dict(m) if isinstance(m, dict) else m for m in messages])
        n = len(self.calls) - 1
        if n < len(self.turns):
            content = [types.SimpleNamespace(type="tool_use", id=f"toolu_{n:02d}_{i}", name="memory",
                                             input=inp) for i, inp in enumerate(self.turns[n])]
            content.insert(0, types.SimpleNamespace(type="text", text="Let me check my memory."))
            return types.SimpleNamespace(stop_reason="tool_use", content=content)
        return types.SimpleNamespace(stop_reason="end_turn",
                                     content=[types.SimpleNamespace(type="text", text="Noted!")])


def brief_loop():
    """The loop as printed in the product brief, when the brief is at hand."""
    brief = ROOT.parent / "shared" / "spec" / "product-brief.md"
    if not brief.exists():
        return None
    lines = brief.read_text(encoding="utf-8").splitlines()
    start = lines.index("import json, areev")
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "Node")
    return "\n".join(lines[start:end]).strip() + "\n"


def test_loop_is_the_documented_one():
    documented = brief_loop()
    if documented is None:
        pytest.skip("product brief not available next to the repository")
    assert LOOP == documented


def test_documented_tool_loop_runs_against_the_binding(tmp_path, monkeypatch):
    import_areev()
    scripted = ScriptedMessages(TURNS)
    fake = types.ModuleType("anthropic")
    fake.Anthropic = lambda: types.SimpleNamespace(messages=scripted)
    monkeypatch.setitem(sys.modules, "anthropic", fake)
    monkeypatch.chdir(tmp_path)

    namespace = {"__name__": "tool_loop"}
    exec(compile(LOOP, "tool_loop.py", "exec"), namespace)  # noqa: S102 - the documented loop
    namespace["m"].close()

    assert len(scripted.calls) == len(TURNS) + 1
    messages = namespace["messages"]
    assert messages[0] == {"role": "user", "content": "Remember: I'm vegetarian."}
    results = [r for msg in messages[1:] if msg["role"] == "user" for r in msg["content"]]
    ids = [r["tool_use_id"] for r in results]
    assert ids == [f"toolu_{t:02d}_{i}" for t, turn in enumerate(TURNS) for i in range(len(turn))]
    contents = [r["content"] for r in results]
    for i, want in EXPECTED_SAMPLES.items():
        assert contents[i] == want, i
    cli = areev_cli()
    if cli:
        flat = [inp for turn in TURNS for inp in turn]
        assert contents == [c for c, _ in cli_batch(cli, str(tmp_path / "cli.db"), "assistant", flat)]

    areev = sys.modules["areev"]
    with areev.Areev(str(pathlib.Path(tmp_path) / "agent.db"), ns="assistant") as m:
        assert m.read("/memories/preferences.md") == (
            "# User preferences\n- Diet: vegetarian\n- Confirmed on request\n")
        assert [h["version"] for h in m.history("/memories/preferences.md")] == [1, 2]
    assert json.loads(json.dumps(contents))  # plain strings, serialisable as API content
