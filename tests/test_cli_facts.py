"""`areev add` and `areev recall`: plain fact and event grains."""
import json
import os
import re
import unicodedata


def add(run_areev, db, *args):
    proc = run_areev("add", *args, "--db", db)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def recall(run_areev, db, *args):
    proc = run_areev("recall", *args, "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_add_prints_grain_id_and_recall_finds_it(run_areev, db):
    out = add(run_areev, db, "--subject", "alice", "--relation", "prefers", "--object", "tea")
    assert re.fullmatch(r"[0-9a-f]{64}\n", out)
    facts = recall(run_areev, db, "--subject", "alice")
    assert len(facts) == 1
    f = facts[0]
    assert f["grain_id"] == out.strip()
    assert (f["type"], f["subject"], f["relation"], f["object"], f["live"]) == \
        ("fact", "alice", "prefers", "tea", True)
    table = run_areev("recall", "--subject", "alice", "--db", db)
    assert table.returncode == 0
    assert table.stdout.splitlines()[0].split()[0] == "GRAIN"
    assert "prefers" in table.stdout and "tea" in table.stdout and "live" in table.stdout


def test_fact_supersedes_same_subject_and_relation(run_areev, db):
    add(run_areev, db, "--subject", "alice", "--relation", "prefers", "--object", "tea")
    add(run_areev, db, "--subject", "alice", "--relation", "prefers", "--object", "coffee",
        "--context", "changed her mind")
    add(run_areev, db, "--subject", "alice", "--relation", "lives_in", "--object", "Oslo")
    live = recall(run_areev, db, "--subject", "alice")
    assert sorted(f["object"] for f in live) == ["Oslo", "coffee"]
    coffee = next(f for f in live if f["object"] == "coffee")
    assert coffee["context"] == "changed her mind" and coffee["version"] == 2
    everything = recall(run_areev, db, "--subject", "alice", "--all")
    assert sorted(f["object"] for f in everything) == ["Oslo", "coffee", "tea"]
    assert next(f for f in everything if f["object"] == "tea")["live"] is False
    only = recall(run_areev, db, "--subject", "alice", "--relation", "lives_in")
    assert [f["object"] for f in only] == ["Oslo"]
    # The fact chain has a history like a file's.
    hist = run_areev("history", "--subject", "alice", "--relation", "prefers", "--db", db,
                     "--json")
    assert hist.returncode == 0, hist.stderr
    assert [v["version"] for v in json.loads(hist.stdout)] == [1, 2]


def test_events_do_not_supersede(run_areev, db):
    add(run_areev, db, "--subject", "bob", "--relation", "visited", "--object", "Rome", "--event")
    add(run_areev, db, "--subject", "bob", "--relation", "visited", "--object", "Paris", "--event")
    facts = recall(run_areev, db, "--subject", "bob")
    assert sorted(f["object"] for f in facts) == ["Paris", "Rome"]
    assert all(f["type"] == "event" and f["live"] for f in facts)


def test_add_json_and_namespaces(run_areev, db):
    proc = run_areev("add", "--subject", "s", "--relation", "r", "--object", "o", "--json",
                     "--db", db, "--ns", "team")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["object"] == "o" and doc["type"] == "fact"
    assert recall(run_areev, db, "--subject", "s", "--ns", "team")[0]["grain_id"] == doc["grain_id"]
    # The default namespace does not see it (it may not even exist yet).
    other = run_areev("recall", "--subject", "s", "--db", db, "--json")
    assert other.returncode in (0, 1)
    if other.returncode == 0:
        assert json.loads(other.stdout) == []


def test_recall_unknown_subject_is_empty(run_areev, db):
    add(run_areev, db, "--subject", "a", "--relation", "r", "--object", "o")
    assert recall(run_areev, db, "--subject", "nobody") == []


def test_add_usage_errors(run_areev, db):
    assert run_areev("add", "--subject", "a", "--db", db).returncode == 2
    bad = run_areev("add", "--subject", "a", "--relation", "memory_file", "--object", "x",
                    "--db", db)
    assert bad.returncode == 2 and bad.stderr
    assert run_areev("add", "--subject", "", "--relation", "r", "--db", db).returncode == 2
    assert run_areev("recall", "--db", db).returncode == 2


# Issue: `areev recall alice` was refused (`--subject is required`), where
# `areev history PATH` takes its subject either way.
def test_recall_takes_its_subject_as_an_argument_too(run_areev, db):
    add(run_areev, db, "--subject", "alice", "--relation", "prefers", "--object", "tea")
    add(run_areev, db, "--subject", "alice", "--relation", "prefers", "--object", "coffee")
    add(run_areev, db, "--subject", "bob", "--relation", "prefers", "--object", "milk")
    for args in (["--all"], ["--json"], ["--relation", "prefers", "--all", "--json"]):
        by_arg = run_areev("recall", "alice", *args, "--db", db)
        assert by_arg.returncode == 0, by_arg.stderr
        assert by_arg.stdout == run_areev("recall", "--subject", "alice", *args, "--db", db).stdout
        assert "coffee" in by_arg.stdout and "milk" not in by_arg.stdout
    assert len(recall(run_areev, db, "alice", "--subject", "alice", "--all")) == 2  # agreeing
    for args, said in [(["alice", "--subject", "bob"], "recall: give the subject once "
                                                       "(SUBJECT or --subject)"),
                       ([], "recall: a subject is required (SUBJECT or --subject)"),
                       (["alice", "bob"], "recall takes no more arguments, but bob was given"),
                       ([" "], "subject: must not be empty or blank")]:
        proc = run_areev("recall", *args, "--db", db)
        assert proc.returncode == 2 and proc.stdout == "", (args, proc)
        assert said in proc.stderr, (args, proc.stderr)


def test_blank_subjects_and_relations_are_usage_errors(run_areev, db):
    """A blank name is refused everywhere, not stored (add) or read as "any" (recall)."""
    add(run_areev, db, "--subject", "a", "--relation", "r", "--object", "o")
    cases = [
        ("add", "--subject", "  ", "--relation", "r"),
        ("add", "--subject", "a", "--relation", "\t"),
        ("add", "--subject", "a", "--relation", ""),
        ("recall", "--subject", " "),
        ("recall", "--subject", "a", "--relation", ""),
        ("history", "--subject", "a", "--relation", ""),
        ("history", "--subject", "a", "--relation", "  "),
        ("history", "--subject", "  ", "--relation", "r"),
        # The positional subject (PATH) too, whatever the relation.
        ("history", ""),
        ("history", " \t"),
        ("history", "  ", "--relation", "r"),
        # Unicode spaces and characters that draw nothing are blank names to
        # store, too.
        ("add", "--subject", "\u00a0", "--relation", "r"),
        ("add", "--subject", "\u200b\u3000", "--relation", "r"),
        ("add", "--subject", "a", "--relation", "\ufeff\u2060"),
        ("add", "--subject", "\u061c\u00ad\ufe0f\U000e0041\u2800", "--relation", "r"),
    ]
    for args in cases:
        proc = run_areev(*args, "--db", db)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "must not be empty or blank" in proc.stderr, (args, proc.stderr)
        assert proc.stdout == "", args
    # Nothing was added by the refused calls; a name with a visible
    # character among such spaces is a name.
    assert [f["object"] for f in recall(run_areev, db, "--subject", "a", "--all")] == ["o"]
    add(run_areev, db, "--subject", "\u200bx\u00a0", "--relation", "r", "--object", "o2")
    assert [f["object"] for f in recall(run_areev, db, "--subject", "\u200bx\u00a0")] == ["o2"]
    # Looked up, such a name is only not found (an earlier build may have
    # stored one), never refused.
    assert recall(run_areev, db, "--subject", "\u2003") == []


def test_names_that_are_not_utf8_are_usage_errors(run_areev, db):
    # "\udcff" reaches the command line as the byte 0xff (surrogateescape).
    for flag in ("--subject", "--relation", "--object"):
        args = {"--subject": "s", "--relation": "r", "--object": "o"}
        args[flag] = "bad\udcff"
        proc = run_areev("add", *[x for kv in args.items() for x in kv], "--db", db)
        assert (proc.returncode, proc.stderr) == (
            2, "areev: add: a fact's subject, relation and object must be UTF-8 text; "
               "run with --help\n"), flag
    assert not os.path.exists(db)  # refused before the store was opened: nothing created
    assert add(run_areev, db, "--subject", "caf\u00e9", "--relation", "r", "--object", "\u00fc")


# Issue: the recall table printed bytes that are not UTF-8 raw (docs/cli.md
# promises U+FFFD, as --json gives), left C1 controls such as U+009B (a
# terminal's CSI) unescaped, and cut cells by bytes, so 30 CJK characters
# showed as 19.
def test_recall_table_shows_text_safely_and_cuts_by_characters(run_areev, db):
    cjk = "日本語" * 10  # 30 characters, 90 bytes: fits a 60-character cell
    add(run_areev, db, "--subject", "s", "--relation", "r", "--object", cjk,
        "--context", b"ctx\xff\xfe")
    add(run_areev, db, "--subject", "s", "--relation", "c1", "--object", "x\u009b31mred")
    add(run_areev, db, "--subject", "s", "--relation", "long", "--object", "é" * 70)
    table = run_areev("recall", "--subject", "s", "--db", db)
    assert table.returncode == 0, table.stderr
    out = table.stdout
    assert cjk in out
    assert "ctx\ufffd\ufffd" in out
    assert "x\\u009b31mred" in out and "\u009b" not in out
    assert "é" * 57 + "..." in out and "é" * 58 not in out
    assert recall(run_areev, db, "--subject", "s", "--relation", "r")[0]["context"] == \
        "ctx\ufffd\ufffd"


def display_width(text):
    """Terminal columns: two for East Asian wide and fullwidth characters,
    none for combining marks, one for the rest."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


# Issue: column widths counted characters, so a CJK cell (two terminal
# columns per character) pushed the rest of its row right.
def test_recall_table_aligns_wide_characters_by_terminal_columns(run_areev, db):
    add(run_areev, db, "--subject", "s", "--relation", "\u597d\u307f", "--object", "\u7dd1\u8336\u3067\u3059")
    add(run_areev, db, "--subject", "s", "--relation", "likes", "--object", "tea")
    add(run_areev, db, "--subject", "s", "--relation", "cafe\u0301", "--object", "\U0001F375 hot")
    table = run_areev("recall", "--subject", "s", "--db", db)
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert len(rows) == 3
    state_column = display_width(header[:header.index("STATE")])
    for row in rows:
        assert row.endswith("live"), row
        assert display_width(row[:row.rindex("live")]) == state_column, table.stdout
