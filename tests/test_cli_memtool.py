"""`areev memtool`: single commands, stdin, --batch, namespaces, AREEV_DB."""
import json
import os
import resource
import subprocess

import pytest


def create(path, text):
    return json.dumps({"command": "create", "path": path, "file_text": text})


def view(path):
    return json.dumps({"command": "view", "path": path})


def test_create_then_view_prints_content_verbatim(areev_bin, db):
    out = subprocess.run([areev_bin, "memtool", create("/memories/prefs.md", "Vegetarian.\n"),
                          "--db", db], capture_output=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"File created successfully at: /memories/prefs.md"  # no newline added
    assert out.stderr == b""
    out = subprocess.run([areev_bin, "memtool", view("/memories/prefs.md"), "--db", db],
                         capture_output=True)
    assert out.returncode == 0
    assert out.stdout == (b"Here's the content of /memories/prefs.md with line numbers:\n"
                          b"     1\tVegetarian.\n     2\t")


def test_tool_error_exits_1_with_error_content_on_stdout(run_areev, db):
    proc = run_areev("memtool", view("/memories/missing.md"), "--db", db)
    assert proc.returncode == 1
    assert proc.stdout.startswith("Error: ")
    assert "/memories/missing.md" in proc.stdout


def test_hostile_path_is_a_tool_error_not_a_crash(run_areev, db):
    proc = run_areev("memtool", create("/memories/../etc/passwd", "x"), "--db", db)
    assert proc.returncode == 1
    assert proc.stdout == "Error: Path /memories/../etc/passwd would escape /memories directory"


def test_malformed_json_is_a_tool_error(run_areev, db):
    proc = run_areev("memtool", '{"command": "view", "path": ', "--db", db)
    assert proc.returncode == 1
    assert proc.stdout.startswith("Error: ")


def test_command_from_stdin(areev_bin, db):
    body = "x" * 300_000 + "\n"  # larger than one argv string may be
    cmd = create("/memories/big.txt", body).encode()
    proc = subprocess.run([areev_bin, "memtool", "-", "--db", db], input=cmd, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([areev_bin, "cat", "/memories/big.txt", "--db", db], capture_output=True)
    assert proc.stdout == body.encode()


def test_batch_one_result_line_per_command(run_areev, db):
    lines = [
        create("/memories/a.md", "one\ntwo\n"),
        "",  # blank lines are skipped
        json.dumps({"command": "str_replace", "path": "/memories/a.md", "old_str": "two",
                    "new_str": "2"}),
        "{not json",
        "   ",
        view("/memories/a.md"),
        view("/memories/nope"),
    ]
    proc = run_areev("memtool", "--batch", "--db", db, input="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == 5
    assert results[0] == {"content": "File created successfully at: /memories/a.md",
                          "is_error": False}
    assert results[1]["is_error"] is False
    assert results[2]["is_error"] is True and results[2]["content"].startswith("Error: ")
    assert results[3] == {"content": "Here's the content of /memories/a.md with line numbers:\n"
                                     "     1\tone\n     2\t2\n     3\t", "is_error": False}
    assert results[4]["is_error"] is True


def test_batch_without_trailing_newline_and_crlf(run_areev, db):
    proc = run_areev("memtool", "--batch", "--db", db,
                     input=create("/memories/a", "x") + "\r\n" + view("/memories/a"))
    assert proc.returncode == 0
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["is_error"] for r in results] == [False, False]
    assert results[1]["content"].endswith("     1\tx")


def test_batch_empty_input_prints_nothing(run_areev, db):
    proc = run_areev("memtool", "--batch", "--db", db, input="")
    assert proc.returncode == 0
    assert proc.stdout == ""


def test_usage_errors_exit_2(run_areev, db):
    assert run_areev("memtool", "--db", db).returncode == 2  # no command
    proc = run_areev("memtool", view("/memories"), "--batch", "--db", db, input="")
    assert proc.returncode == 2
    assert "areev:" in proc.stderr and proc.stdout == ""
    proc = run_areev("memtool", view("/memories"), "--no-such-flag", "--db", db)
    assert proc.returncode == 2
    assert proc.stdout == ""


def test_namespaces_isolate(run_areev, db):
    assert run_areev("memtool", create("/memories/a.md", "A"), "--db", db,
                     "--ns", "assistant").returncode == 0
    other = run_areev("memtool", view("/memories"), "--db", db, "--ns", "other")
    assert other.returncode == 0
    assert "a.md" not in other.stdout
    mine = run_areev("memtool", view("/memories"), "--db", db, "--ns", "assistant")
    assert "/memories/a.md" in mine.stdout
    # The default namespace is "default", also separate.
    assert "a.md" not in run_areev("memtool", view("/memories"), "--db", db).stdout
    assert run_areev("cat", "/memories/a.md", "--db", db, "--ns", "other").returncode == 1
    assert run_areev("cat", "/memories/a.md", "--db", db, "--ns", "assistant").stdout == "A"


def test_global_options_before_or_after_subcommand(run_areev, db):
    assert run_areev("--db", db, "--ns", "n1", "memtool",
                     create("/memories/x", "1")).returncode == 0
    assert run_areev("memtool", view("/memories/x"), "--ns", "n1", "--db", db).returncode == 0


def test_areev_db_env_is_honoured(run_areev, tmp_path):
    env_db = str(tmp_path / "from-env.db")
    proc = run_areev("memtool", create("/memories/e.md", "env"), env={"AREEV_DB": env_db})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "from-env.db").exists()
    assert run_areev("cat", "/memories/e.md", env={"AREEV_DB": env_db}).stdout == "env"
    # --db wins over the environment.
    other = str(tmp_path / "flag.db")
    assert run_areev("memtool", create("/memories/f.md", "flag"), "--db", other,
                     env={"AREEV_DB": env_db}).returncode == 0
    assert run_areev("cat", "/memories/f.md", env={"AREEV_DB": env_db}).returncode == 1


def test_default_db_is_agent_db_in_cwd(areev_bin, tmp_path):
    import os
    env = {k: v for k, v in os.environ.items() if k != "AREEV_DB"}
    proc = subprocess.run([areev_bin, "memtool", create("/memories/d", "d")], cwd=tmp_path,
                          env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "agent.db").exists()


def test_durable_mode_writes_and_reads(run_areev, db):
    proc = run_areev("memtool", create("/memories/d.md", "durable\n"), "--db", db, "--durable")
    assert proc.returncode == 0, proc.stderr
    assert run_areev("cat", "/memories/d.md", "--db", db, "--durable").stdout == "durable\n"


def test_help_exits_0(run_areev):
    proc = run_areev("--help")
    assert proc.returncode == 0
    for name in ["memtool", "history", "cat", "diff", "log", "restore", "purge", "add", "recall",
                 "mount", "umount"]:
        assert name in proc.stdout
    assert run_areev("memtool", "--help").returncode == 0


# Issue: a command nested deeply in a member the memory tool never reads was
# decoded into a whole document of 75 times its size (a 50 MB line took
# 3.7 GB), and one with millions of unknown members kept every one of them
# (a 77 MB line over 1 GB), enough to get an agent's process killed for want
# of memory.
def test_a_huge_command_is_answered_within_a_small_multiple_of_its_size(areev_bin, db):
    if os.environ.get("AREEV_PRESET") == "asan":
        pytest.skip("ASan reserves more address space than the limit under test")
    n = 20_000_000
    head = '{"command":"view","path":"/memories",'
    nested = head + '"x":' + "[" * n + "]" * n + "}\n"
    unclosed = head + '"x":' + "[" * n + "\n"
    wide = head + ",".join(f'"k{i}":1' for i in range(6_000_000)) + "}\n"

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    listing = {"content": "Here're the files and directories up to 2 levels deep in /memories, "
                          "excluding hidden items and node_modules:\n4K\t/memories",
               "is_error": False}
    for line, answer in ((nested, listing), (unclosed, {"content": "Error: Input is not valid JSON",
                                                        "is_error": True}), (wide, listing)):
        proc = subprocess.run([areev_bin, "memtool", "--batch", "--db", db],
                              input=line.encode(), capture_output=True,
                              preexec_fn=limit_memory, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert json.loads(proc.stdout) == answer, line[:80]


def feed(proc, parts):
    """Writes `parts` (bytes, or (chunk, count) to repeat a chunk) to the
    process's stdin and closes it, without holding the whole input."""
    try:
        for part in parts:
            chunk, count = part if isinstance(part, tuple) else (part, 1)
            for _ in range(count):
                proc.stdin.write(chunk)
    except BrokenPipeError:
        pass
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass


# Issue: stdin was read whole before the input limit was applied, so a
# command far over the limit took twice its size in memory (a 1 GB line
# 2.1 GB) and, under a memory limit, killed the process (`memtool -`) or
# ended the batch before the commands after it.
def test_a_command_over_the_input_limit_is_refused_in_bounded_memory(areev_bin, db):
    if os.environ.get("AREEV_PRESET") == "asan":
        pytest.skip("ASan reserves more address space than the limit under test")
    import threading

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (1200 << 20, 1200 << 20))

    view = b'{"command":"view","path":"/memories"}'
    over = [view[:-1] + b',"pad":"', (b"x" * (1 << 20), 900), b'"}']
    # A command of exactly the limit, then a carriage return and more: the
    # line is over the limit, though the limit's bytes alone are a command.
    head = view[:-1] + b',"pad":"'
    limit = 268435456
    at_limit = [head, (b"x" * (1 << 20), (limit - len(head) - 2) >> 20),
                b"x" * ((limit - len(head) - 2) & ((1 << 20) - 1)), b'"}', b"\rnot json"]
    too_large = "Error: Input is too large (limit 268435456 bytes)"
    for argv, parts in (
            (["memtool", "--batch"], over + [b"\n", view, b"\n"]),
            (["memtool", "--batch"], at_limit + [b"\n", view, b"\n"]),
            (["memtool", "-"], over)):
        proc = subprocess.Popen([areev_bin, *argv, "--db", db], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=limit_memory)
        writer = threading.Thread(target=feed, args=(proc, parts))
        writer.start()
        out = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=120)
        writer.join()
        if argv[1] == "-":
            assert (proc.returncode, out.decode()) == (1, too_large), err[-2000:]
        else:
            lines = [json.loads(line) for line in out.splitlines()]
            assert proc.returncode == 0, err[-2000:]
            assert [line["content"] for line in lines] == [
                too_large, "Here're the files and directories up to 2 levels deep in "
                "/memories, excluding hidden items and node_modules:\n4K\t/memories"]


# Issue: under a memory limit, a command too large to hold (or answer) threw
# std::bad_alloc outside the tool's own handling and aborted the process: the
# batch's later commands never ran, and a single command dumped core instead
# of answering.
def test_a_command_without_memory_to_run_fails_alone(areev_bin, db):
    if os.environ.get("AREEV_PRESET") == "asan":
        pytest.skip("ASan reserves more address space than the limit under test")

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (50 << 20, 50 << 20))

    def create(path, text):
        return json.dumps({"command": "create", "path": path, "file_text": text})

    big = create("/memories/big.md", "x" * 20_000_000)
    batch = "\n".join([create("/memories/pre.md", "pre\n"), big,
                       create("/memories/post.md", "post\n")]) + "\n"
    proc = subprocess.run([areev_bin, "memtool", "--batch", "--db", db], input=batch.encode(),
                          capture_output=True, preexec_fn=limit_memory, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["is_error"] for r in results] == [False, True, False], results
    assert results[1]["content"] == "Error: Out of memory"
    assert b"out of memory" in proc.stderr
    proc = subprocess.run([areev_bin, "memtool", "-", "--db", db], input=big.encode(),
                          capture_output=True, preexec_fn=limit_memory, timeout=120)
    assert (proc.returncode, proc.stdout) == (1, b"Error: Out of memory"), proc.stderr[-2000:]
    listing = subprocess.run([areev_bin, "memtool", '{"command":"view","path":"/memories"}',
                              "--db", db], capture_output=True, text=True, check=True).stdout
    assert "pre.md" in listing and "post.md" in listing and "big.md" not in listing
    # Held, but too large for SQLite to store in the room left: its own out
    # of memory is answered the same way, not as a storage failure.
    larger = create("/memories/larger.md", "x" * 100_000_000) + "\n"
    proc = subprocess.run([areev_bin, "memtool", "--batch", "--db", db],
                          input=larger.encode() + batch.encode(), capture_output=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (300 << 20, 300 << 20)),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert results[0] == {"content": "Error: Out of memory", "is_error": True}, results[0]
    assert b"memtool: " in proc.stderr and b"out of memory" in proc.stderr
