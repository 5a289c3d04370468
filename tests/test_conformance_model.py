"""The memory tool against an independent model of its contract.

contract_cases.py holds scenarios built from the contract's rules (paths,
view ranges, listings and sizes, edits, renames, malformed parameters); each
runs on a fresh store through `areev memtool --batch`, and every result must
equal, byte for byte, what contract_model.py (written from the contract's
text, not from areev's code) answers. Cases marked `amb` are where the
contract is silent and the model only guesses; docs/memtool.md and the
vectors under tests/vectors/ pin areev's choice for those instead.
"""
import json
import os
import pathlib

import pytest

from batch_util import run_batch
from contract_cases import CASES
from contract_model import fmt_size, run_model

VECTORS = pathlib.Path(__file__).parent / "vectors" / "memory-tool-vectors.json"
CHECKED = [c for c in CASES if not c[2].get("amb")]
# Both encodings reach both JSON decoders in the release pass; the sanitizer
# pass, ten times slower per call, sends each case once.
ENCODINGS = [False] if os.environ.get("AREEV_PRESET") == "asan" else [True, False]


def encode(step, ascii_only):
    # A raw string is sent as written: malformed input.
    if isinstance(step, str):
        return step
    if ascii_only:
        return json.dumps(step)
    return json.dumps(step, ensure_ascii=False, separators=(",", ":"))


def model_input(step):
    """The command the model sees; input that is no JSON object never names one."""
    if isinstance(step, dict):
        return step
    try:
        obj = json.loads(step)
    except ValueError:
        obj = None
    return obj if isinstance(obj, dict) else {"command": "<<unparseable>>"}


def test_the_model_answers_every_contract_vector():
    # The oracle is checked first against the contract's own worked examples.
    for vector in json.loads(VECTORS.read_text()):
        want = [(s["output"], s["is_error"]) for s in vector["steps"]]
        assert run_model([s["input"] for s in vector["steps"]]) == want, vector["name"]


def test_the_model_formats_sizes_as_the_contract_table_does():
    table = [(1, "1B"), (1023, "1023B"), (1024, "1K"), (1280, "1.2K"), (1536, "1.5K"),
             (1792, "1.8K"), (2304, "2.2K"), (4096, "4K"), (20000, "19.5K"),
             (1048575, "1024.0K"), (1048576, "1M"), (1310720, "1.2M"), (2**40, "1024G")]
    for n, text in table:
        assert fmt_size(n) == text, n


@pytest.mark.parametrize("case", [c for c in CASES if c[2].get("hand")], ids=lambda c: c[0])
def test_the_model_agrees_with_hand_worked_results(case):
    name, steps, opts = case
    got = run_model([model_input(s) for s in steps])
    for i, want in opts["hand"].items():
        assert got[i] == want, (name, i)


@pytest.mark.parametrize("ascii_only", ENCODINGS, ids=lambda a: "escaped" if a else "utf8")
@pytest.mark.parametrize("case", CHECKED, ids=lambda c: c[0])
def test_areev_answers_as_the_model(areev_bin, tmp_path, case, ascii_only):
    name, steps, _ = case
    want = run_model([model_input(s) for s in steps])
    lines = [encode(s, ascii_only).encode("utf-8", "surrogatepass") for s in steps]
    got = [(r["content"], r["is_error"]) for r in run_batch(areev_bin, tmp_path / "agent.db", lines)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{name} step {i}: {steps[i]!r:.300}"
