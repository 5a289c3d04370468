"""Running commands through `areev memtool --batch`: one JSON command per
line in, one JSON result per line out."""
import json
import subprocess


def run_batch(areev_bin, db, lines, timeout=300):
    """Sends `lines` (bytes, one command each, without newlines) to one
    `areev memtool --batch` process on `db`; returns its results, one dict
    {"content", "is_error"} per command, after checking the framing."""
    proc = subprocess.run([str(areev_bin), "memtool", "--batch", "--db", str(db)],
                          input=b"".join(line + b"\n" for line in lines),
                          capture_output=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = proc.stdout.split(b"\n")
    assert out[-1] == b"", "batch output must end with a newline"
    assert len(out) - 1 == len(lines), proc.stdout[-500:]
    results = [json.loads(line) for line in out[:-1]]
    for line, result in zip(out, results):
        assert set(result) == {"content", "is_error"}, line
    return results
