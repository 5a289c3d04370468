#!/usr/bin/env python3
"""Writes tests/vectors/extra-vectors.json: worked examples of the contract
rules (memory-tool-contract.md section 11 and its project decisions) that the
shipped memory-tool-vectors.json does not exemplify.

Every expected output below is spelled out from the contract text; where the
contract says "Python semantics" the expectation is computed with Python's own
str operations (the reference), never with the C++ implementation under test.

Usage: python3 memtool/testdata/make_extra_vectors.py  (from the repo root)
"""
import json
import os

DIR_HEADER = ("Here're the files and directories up to 2 levels deep in {}, "
              "excluding hidden items and node_modules:\n4K\t{}")
FILE_HEADER = "Here's the content of {} with line numbers:\n"
SNIPPET_HEADER = ("The memory file has been edited. Here is the snippet showing the change "
                  "(with line numbers):\n")


def ok(inp, out):
    return {"input": inp, "output": out, "is_error": False}


def err(inp, msg):
    return {"input": inp, "output": "Error: " + msg, "is_error": True}


def create(path, text):
    return ok({"command": "create", "path": path, "file_text": text},
              "File created successfully at: " + path)


def listing(path, *entries):
    """entries: (size, rel) pairs; rel ends with '/' for directories."""
    return DIR_HEADER.format(path, path) + "".join(
        "\n{}\t{}/{}".format(size, path, rel) for size, rel in entries)


def numbered(lines, first=1):
    return "\n".join("{:6d}\t{}".format(first + i, t) for i, t in enumerate(lines))


def view_file(path, content, first=None, last=None):
    """Expected `view` output (C11) using Python slicing on the split lines."""
    lines = content.split("\n")
    if first is None:
        return FILE_HEADER.format(path) + numbered(lines)
    start = max(1, first)
    end = len(lines) if last == -1 else last
    return FILE_HEADER.format(path) + numbered(lines[start - 1:end], start)


_ABSENT = object()


def view(path, view_range=_ABSENT):
    inp = {"command": "view", "path": path}
    if view_range is not _ABSENT:
        inp["view_range"] = view_range
    return inp


def snippet(new_content, k):
    lines = new_content.split("\n")
    lo, hi = max(0, k - 2), min(len(lines), k + 3)
    return SNIPPET_HEADER + numbered(lines[lo:hi], lo + 1)


def python_match_lines(content, old):
    """The line list of C14: restart one character after each match start."""
    out, start = [], 0
    while True:
        i = content.find(old, start)
        if i == -1:
            return out
        out.append(str(content[:i].count("\n") + 1))
        start = i + 1


def ambiguous(content, old):
    return ("No replacement was performed. Multiple occurrences of old_str `{}` in lines: {}. "
            "Please ensure it is unique").format(old, ", ".join(python_match_lines(content, old)))


def python_insert(content, line, text):
    """C16: Python line counting ('\\n' only), all trailing '\\n' stripped."""
    lines = content.split("\n")
    if content.endswith("\n"):
        lines = lines[:-1]
    if content == "":
        lines = []
    lines.insert(line, text.rstrip("\n"))
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"


def escape(p):
    return "Path {} would escape /memories directory".format(p)


def param(name, command):
    return "Parameter `{}` is required for command: {}".format(name, command)


CASES = []


def case(name, *steps):
    CASES.append({"name": name, "steps": list(steps)})


# ---- C4-C8 paths ---------------------------------------------------------
case("path_memoriesX_is_escape",
     err(view("/memoriesX"), escape("/memoriesX")),
     err({"command": "create", "path": "/memoriesX", "file_text": "x"}, escape("/memoriesX")),
     err({"command": "create", "path": "/memories_backup/a.txt", "file_text": "x"},
         escape("/memories_backup/a.txt")),
     err({"command": "delete", "path": "/memoriesX/a"}, escape("/memoriesX/a")),
     ok(view("/memories"), listing("/memories")))

BAD = ["/memories/a\\b.txt", "/memories/\\..\\x", "/memories/a\u0000b.txt", "/memories/%2e%2e/x",
       "/memories/%2E%2E", "/memories/a%2fb", "/memories/a%2Fb", "/memories/a%5cb",
       "/memories/a%5Cb", "/memories/x%2e", "/memories/%2e"]
case("path_backslash_nul_and_encoded_separators_rejected",
     *[err({"command": "create", "path": p, "file_text": "x"}, escape(p)) for p in BAD],
     *[err(view(p), escape(p)) for p in BAD[:3]],
     err({"command": "str_replace", "path": BAD[3], "old_str": "a", "new_str": "b"}, escape(BAD[3])),
     err({"command": "insert", "path": BAD[6], "insert_line": 0, "insert_text": "b"}, escape(BAD[6])),
     err({"command": "rename", "old_path": "/memories/x", "new_path": BAD[8]}, escape(BAD[8])),
     ok(view("/memories"), listing("/memories")))

case("path_percent_sequences_that_are_not_separators_are_names",
     create("/memories/100%25.txt", "p"),
     create("/memories/%2x.txt", "q"),
     ok(view("/memories"), listing("/memories", ("1B", "%2x.txt"), ("1B", "100%25.txt"))))

case("path_internal_dot_dot_rejected_and_dot_dropped",
     err({"command": "create", "path": "/memories/a/../b.txt", "file_text": "x"},
         escape("/memories/a/../b.txt")),
     err({"command": "create", "path": "/memories/a/..", "file_text": "x"}, escape("/memories/a/..")),
     err(view("/memories/.."), escape("/memories/..")),
     err({"command": "delete", "path": "/memories/a/b/../../.."}, escape("/memories/a/b/../../..")),
     create("/memories/a/./b.txt", "dot"),
     ok(view("/memories/a/b.txt"), view_file("/memories/a/b.txt", "dot")),
     ok(view("/memories/./a"), listing("/memories/./a", ("3B", "b.txt"))),
     err(view("/memories/..."), "The path /memories/... does not exist. Please provide a valid path."))

case("path_double_slash_normalises_to_same_key",
     create("/memories//a.txt", "x"),
     ok(view("/memories/a.txt"), view_file("/memories/a.txt", "x")),
     ok(view("/memories"), listing("/memories", ("1B", "a.txt"))),
     create("/memories///a.txt", "yy"),
     ok(view("/memories//a.txt"), view_file("/memories//a.txt", "yy")),
     ok(view("/memories/"), listing("/memories/", ("2B", "a.txt"))),
     ok(view("/memories/a.txt/"), view_file("/memories/a.txt/", "yy")))

case("path_history_directory_is_an_ordinary_hidden_name",
     create("/memories/.history/x.txt", "x"),
     ok(view("/memories/.history/x.txt"), view_file("/memories/.history/x.txt", "x")),
     ok(view("/memories"), listing("/memories")),
     create("/memories/f.txt", "f"),
     ok({"command": "rename", "old_path": "/memories/f.txt", "new_path": "/memories/.history/f.txt"},
        "Successfully renamed /memories/f.txt to /memories/.history/f.txt"),
     ok({"command": "delete", "path": "/memories/.history"},
        "Successfully deleted /memories/.history"))

# ---- view -----------------------------------------------------------------
FIVE = "one\ntwo\nthree\nfour\nfive"
case("view_range_negative_end_counts_from_end",
     create("/memories/f.txt", FIVE),
     ok(view("/memories/f.txt", [2, -2]), view_file("/memories/f.txt", FIVE, 2, -2)),
     ok(view("/memories/f.txt", [-5, 2]), view_file("/memories/f.txt", FIVE, -5, 2)),
     ok(view("/memories/f.txt", [2, -100]), FILE_HEADER.format("/memories/f.txt")),
     ok(view("/memories/f.txt", [0, 0]), FILE_HEADER.format("/memories/f.txt")),
     ok(view("/memories/f.txt", [4, 2]), FILE_HEADER.format("/memories/f.txt")),
     ok(view("/memories/f.txt", [10, -1]), FILE_HEADER.format("/memories/f.txt")),
     ok(view("/memories/f.txt", [5, 5]), view_file("/memories/f.txt", FIVE, 5, 5)),
     ok(view("/memories/f.txt", [3, 9223372036854775807]), view_file("/memories/f.txt", FIVE, 3, 5)),
     ok(view("/memories/f.txt", [-9223372036854775808, 18446744073709551615]),
        view_file("/memories/f.txt", FIVE)))

assert view_file("/memories/f.txt", FIVE, 2, -2).endswith("     2\ttwo\n     3\tthree")

case("view_range_of_wrong_types_is_ignored",
     create("/memories/f.txt", FIVE),
     *[ok(view("/memories/f.txt", r), view_file("/memories/f.txt", FIVE)) for r in
       [[1, "2"], ["1", "2"], [1.0, 2], [1, 2.5], [True, 1], [None, None], [], [3], [1, 2, 3],
        "1,2", {"start": 1, "end": 2}, 2, None, [[1], [2]]]])

case("view_directory_depth_two_hidden_and_node_modules",
     create("/memories/d/.h.txt", "h"),
     create("/memories/d/node_modules/x.js", "x"),
     create("/memories/d/ok.txt", "ok"),
     create("/memories/d/sub/.hidden/x", "x"),
     create("/memories/d/sub/deeper/y.txt", "y"),
     create("/memories/d/sub/z.txt", "zzz"),
     create("/memories/.top/a.txt", "a"),
     create("/memories/node_modules/b.txt", "b"),
     ok(view("/memories"), listing("/memories", ("4K", "d/"), ("2B", "d/ok.txt"), ("4K", "d/sub/"))),
     ok(view("/memories/d"), listing("/memories/d", ("2B", "ok.txt"), ("4K", "sub/"),
                                     ("4K", "sub/deeper/"), ("3B", "sub/z.txt"))),
     ok(view("/memories/d/sub/"), listing("/memories/d/sub/", ("4K", "deeper/"),
                                          ("1B", "deeper/y.txt"), ("3B", "z.txt"))),
     ok(view("/memories/d/node_modules"), listing("/memories/d/node_modules", ("1B", "x.js"))),
     ok(view("/memories/.top/a.txt"), view_file("/memories/.top/a.txt", "a")))

case("view_listing_unicode_byte_order",
     *[create("/memories/" + n, "x") for n in
       ["\U0001F600.txt", "\uFF21.txt", "\u00e9.txt", "z.txt", "a.txt", "B.txt", "\u4e2d.txt"]],
     ok(view("/memories"), listing("/memories", *[("1B", n) for n in sorted(
         ["\U0001F600.txt", "\uFF21.txt", "\u00e9.txt", "z.txt", "a.txt", "B.txt", "\u4e2d.txt"],
         key=lambda s: s.encode("utf-8"))])))

assert CASES[-1]["steps"][-1]["output"].index("\uFF21.txt") < CASES[-1]["steps"][-1]["output"].index(
    "\U0001F600.txt")

SIZES = [(0, "0B"), (1023, "1023B"), (1024, "1K"), (1280, "1.2K"), (1536, "1.5K"), (1792, "1.8K"),
         (2304, "2.2K"), (4096, "4K"), (20000, "19.5K"), (1048575, "1024.0K"), (1048576, "1M")]
case("view_listing_size_formatter_table",
     *[create("/memories/s{:08d}".format(n), "x" * n) for n, _ in SIZES],
     ok(view("/memories"), listing("/memories", *[(s, "s{:08d}".format(n)) for n, s in SIZES])))

case("view_directory_left_after_deleting_its_last_file",
     create("/memories/d/f.txt", "f"),
     ok({"command": "delete", "path": "/memories/d/f.txt"}, "Successfully deleted /memories/d/f.txt"),
     ok(view("/memories"), listing("/memories", ("4K", "d/"))),
     ok(view("/memories/d"), listing("/memories/d")),
     err(view("/memories/d/f.txt"), "The path /memories/d/f.txt does not exist. Please provide a valid path."))

case("view_below_a_file_does_not_exist",
     create("/memories/f.txt", "f"),
     err(view("/memories/f.txt/x"), "The path /memories/f.txt/x does not exist. Please provide a valid path."),
     err({"command": "str_replace", "path": "/memories/f.txt/x", "old_str": "f", "new_str": "g"},
         "The path /memories/f.txt/x does not exist. Please provide a valid path."),
     err({"command": "insert", "path": "/memories/f.txt/x", "insert_line": 0, "insert_text": "g"},
         "The path /memories/f.txt/x does not exist"),
     err({"command": "delete", "path": "/memories/f.txt/x"}, "The path /memories/f.txt/x does not exist"))

case("view_nul_and_control_bytes_are_stored_verbatim",
     create("/memories/n.bin", "a\u0000b\u0001\n\u007f"),
     ok(view("/memories/n.bin"), view_file("/memories/n.bin", "a\u0000b\u0001\n\u007f")),
     ok(view("/memories"), listing("/memories", ("6B", "n.bin"))))

# 999,999 lines is the most a view shows; one more '\n' makes 1,000,000.
MAX_OK = "\n" * 999998
case("view_maximum_line_limit",
     create("/memories/big.txt", MAX_OK),
     ok(view("/memories/big.txt", [999999, -1]), FILE_HEADER.format("/memories/big.txt") + "999999\t"),
     ok(view("/memories/big.txt", [999998, 999998]),
        FILE_HEADER.format("/memories/big.txt") + "999998\t"),
     ok({"command": "insert", "path": "/memories/big.txt", "insert_line": 999998, "insert_text": "x"},
        "The file /memories/big.txt has been edited."),
     err(view("/memories/big.txt"), "File /memories/big.txt exceeds maximum line limit of 999,999 lines."),
     err(view("/memories/big.txt", [1, 1]),
         "File /memories/big.txt exceeds maximum line limit of 999,999 lines."),
     ok(view("/memories"), listing("/memories", ("976.6K", "big.txt"))))

# ---- create --------------------------------------------------------------
case("create_parent_is_file_deep_no_side_effects",
     create("/memories/f.txt", "f"),
     err({"command": "create", "path": "/memories/f.txt/a/b/c.txt", "file_text": "x"},
         "A parent of /memories/f.txt/a/b/c.txt is a file, not a directory"),
     create("/memories/d/g.txt", "g"),
     err({"command": "create", "path": "/memories/d/g.txt/x", "file_text": "x"},
         "A parent of /memories/d/g.txt/x is a file, not a directory"),
     ok(view("/memories"), listing("/memories", ("4K", "d/"), ("1B", "d/g.txt"), ("1B", "f.txt"))))

case("create_trailing_slash_creates_a_file",
     create("/memories/x/", "hi"),
     ok(view("/memories"), listing("/memories", ("2B", "x"))),
     ok(view("/memories/x"), view_file("/memories/x", "hi")),
     create("/memories/d/f.txt", "f"),
     err({"command": "create", "path": "/memories/d/", "file_text": "x"}, "File /memories/d/ already exists"),
     err({"command": "create", "path": "/memories/", "file_text": "x"}, "File /memories/ already exists"),
     err({"command": "create", "path": "/memories/.", "file_text": "x"}, "File /memories/. already exists"))

# ---- str_replace ----------------------------------------------------------
U = "a\u00e9\n\U0001F600"
case("str_replace_empty_old_str_lists_every_code_point",
     create("/memories/u.txt", U),
     err({"command": "str_replace", "path": "/memories/u.txt", "old_str": "", "new_str": "x"},
         ambiguous(U, "")),
     ok(view("/memories/u.txt"), view_file("/memories/u.txt", U)))

assert ambiguous(U, "").endswith("lines: 1, 1, 1, 2, 2. Please ensure it is unique")

case("str_replace_overlapping_aaaa_lists_three_starts",
     create("/memories/a.txt", "aaaa"),
     err({"command": "str_replace", "path": "/memories/a.txt", "old_str": "aa", "new_str": "b"},
         ambiguous("aaaa", "aa")),
     create("/memories/b.txt", "xaa\naa\nfoo foo"),
     err({"command": "str_replace", "path": "/memories/b.txt", "old_str": "aa", "new_str": "b"},
         ambiguous("xaa\naa\nfoo foo", "aa")),
     err({"command": "str_replace", "path": "/memories/b.txt", "old_str": "x\na", "new_str": "b"},
         "No replacement was performed, old_str `x\na` did not appear verbatim in /memories/b.txt."),
     err({"command": "str_replace", "path": "/memories/b.txt", "old_str": "o", "new_str": "b"},
         ambiguous("xaa\naa\nfoo foo", "o")))

assert ambiguous("aaaa", "aa").endswith("lines: 1, 1, 1. Please ensure it is unique")

MULTI = "l1\nl2\nl3\nl4 start\nl5 end\nl6\nl7\nl8"
MULTI_NEW = MULTI.replace("start\nl5 end", "N1\nN2\nN3\nN4")
case("str_replace_multiline_old_str_snippet_anchored_at_start",
     create("/memories/m.txt", MULTI),
     ok({"command": "str_replace", "path": "/memories/m.txt", "old_str": "start\nl5 end",
         "new_str": "N1\nN2\nN3\nN4"}, snippet(MULTI_NEW, 3)),
     ok(view("/memories/m.txt"), view_file("/memories/m.txt", MULTI_NEW)))

assert snippet(MULTI_NEW, 3).endswith("     2\tl2\n     3\tl3\n     4\tl4 N1\n     5\tN2\n     6\tN3")

DOLLAR = "x = 1\ny = 2\n"
case("str_replace_dollar_patterns_are_literal",
     create("/memories/d.txt", DOLLAR),
     ok({"command": "str_replace", "path": "/memories/d.txt", "old_str": "1",
         "new_str": "$& $$ $` $' $1"}, snippet("x = $& $$ $` $' $1\ny = 2\n", 0)),
     ok(view("/memories/d.txt"), view_file("/memories/d.txt", "x = $& $$ $` $' $1\ny = 2\n")))

CRLF = "a\r\nb\r\nc\r\n"
case("str_replace_crlf_preserved",
     create("/memories/w.txt", CRLF),
     ok({"command": "str_replace", "path": "/memories/w.txt", "old_str": "b", "new_str": "B"},
        snippet("a\r\nB\r\nc\r\n", 1)),
     ok(view("/memories/w.txt"), view_file("/memories/w.txt", "a\r\nB\r\nc\r\n")),
     ok({"command": "str_replace", "path": "/memories/w.txt", "old_str": "B\r\nc", "new_str": "C"},
        snippet("a\r\nC\r\n", 1)))

assert snippet("a\r\nB\r\nc\r\n", 1).endswith("     1\ta\r\n     2\tB\r\n     3\tc\r\n     4\t")

case("str_replace_on_root_and_new_str_null_or_wrong_type",
     err({"command": "str_replace", "path": "/memories", "old_str": "a", "new_str": "b"},
         "The path /memories does not exist. Please provide a valid path."),
     create("/memories/n.txt", "keep drop"),
     ok({"command": "str_replace", "path": "/memories/n.txt", "old_str": " drop", "new_str": None},
        snippet("keep", 0)),
     err({"command": "str_replace", "path": "/memories/n.txt", "old_str": "keep", "new_str": 5},
         "Parameter `new_str` must be a string for command: str_replace"),
     ok({"command": "str_replace", "path": "/memories/n.txt", "old_str": "keep", "new_str": "keep"},
        snippet("keep", 0)),
     ok(view("/memories/n.txt"), view_file("/memories/n.txt", "keep")))

# ---- insert ---------------------------------------------------------------
case("insert_strips_all_trailing_newlines",
     create("/memories/i.txt", "a\nb\n"),
     ok({"command": "insert", "path": "/memories/i.txt", "insert_line": 1, "insert_text": "x\n\n\n"},
        "The file /memories/i.txt has been edited."),
     ok(view("/memories/i.txt"), view_file("/memories/i.txt", python_insert("a\nb\n", 1, "x\n\n\n"))),
     ok({"command": "insert", "path": "/memories/i.txt", "insert_line": 3, "insert_text": "\n\n"},
        "The file /memories/i.txt has been edited."),
     ok(view("/memories/i.txt"), view_file("/memories/i.txt", python_insert("a\nx\nb\n", 3, "\n\n"))))

assert python_insert("a\nb\n", 1, "x\n\n\n") == "a\nx\nb\n"

case("insert_into_crlf_file_keeps_cr",
     create("/memories/w.txt", CRLF),
     ok({"command": "insert", "path": "/memories/w.txt", "insert_line": 1, "insert_text": "x"},
        "The file /memories/w.txt has been edited."),
     ok(view("/memories/w.txt"), view_file("/memories/w.txt", python_insert(CRLF, 1, "x"))),
     err({"command": "insert", "path": "/memories/w.txt", "insert_line": 5, "insert_text": "x"},
         "Invalid `insert_line` parameter: 5. It should be within the range of lines of the file: [0, 4]"))

assert python_insert(CRLF, 1, "x") == "a\r\nx\nb\r\nc\r\n"

case("insert_middle_of_unterminated_file_appends_newline",
     create("/memories/i.txt", "a\nb\nc"),
     ok({"command": "insert", "path": "/memories/i.txt", "insert_line": 1, "insert_text": ""},
        "The file /memories/i.txt has been edited."),
     ok(view("/memories/i.txt"), view_file("/memories/i.txt", "a\n\nb\nc\n")),
     create("/memories/j.txt", "a\n\n"),
     ok({"command": "insert", "path": "/memories/j.txt", "insert_line": 2, "insert_text": "z"},
        "The file /memories/j.txt has been edited."),
     ok(view("/memories/j.txt"), view_file("/memories/j.txt", python_insert("a\n\n", 2, "z"))))

assert python_insert("a\nb\nc", 1, "") == "a\n\nb\nc\n"

case("insert_line_wrong_types_are_parameter_errors",
     create("/memories/i.txt", "a\n"),
     *[err({"command": "insert", "path": "/memories/i.txt", "insert_line": v, "insert_text": "x"},
           param("insert_line", "insert")) for v in [1.0, 0.5, "1", True, False, None, [1], {"n": 1},
                                                      1e20]],
     err({"command": "insert", "path": "/memories/i.txt", "insert_line": 18446744073709551615,
          "insert_text": "x"},
         "Invalid `insert_line` parameter: 18446744073709551615. It should be within the range of "
         "lines of the file: [0, 1]"),
     err({"command": "insert", "path": "/memories", "insert_line": 0, "insert_text": "x"},
         "The path /memories does not exist"),
     ok(view("/memories/i.txt"), view_file("/memories/i.txt", "a\n")))

# ---- delete ---------------------------------------------------------------
case("delete_root_variants_rejected",
     create("/memories/keep.txt", "k"),
     *[err({"command": "delete", "path": p}, "Cannot delete the /memories directory itself")
       for p in ["/memories", "/memories/", "/memories/.", "/memories//", "/memories/./", "/memories/./."]],
     ok(view("/memories"), listing("/memories", ("1B", "keep.txt"))))

case("delete_with_raw_path_spellings",
     create("/memories/d/a.txt", "a"),
     ok({"command": "delete", "path": "/memories/./d//a.txt"}, "Successfully deleted /memories/./d//a.txt"),
     ok({"command": "delete", "path": "/memories/d/"}, "Successfully deleted /memories/d/"),
     err({"command": "delete", "path": "/memories/d"}, "The path /memories/d does not exist"),
     ok(view("/memories"), listing("/memories")))

# ---- rename ---------------------------------------------------------------
case("rename_root_and_onto_root",
     create("/memories/a.txt", "a"),
     err({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories"},
         "The destination /memories already exists"),
     err({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/"},
         "The destination /memories/ already exists"),
     err({"command": "rename", "old_path": "/memories/", "new_path": "/memories/x"},
         "Cannot rename the /memories directory itself"),
     err({"command": "rename", "old_path": "/memories/.", "new_path": "/memories"},
         "Cannot rename the /memories directory itself"),
     err({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories//a.txt"},
         "The destination /memories//a.txt already exists"),
     ok(view("/memories"), listing("/memories", ("1B", "a.txt"))))

case("rename_into_own_subdirectory_no_side_effects",
     create("/memories/a/f.txt", "f"),
     err({"command": "rename", "old_path": "/memories/a", "new_path": "/memories/a/sub"},
         "Cannot rename /memories/a to a subdirectory of itself, /memories/a/sub"),
     err({"command": "rename", "old_path": "/memories/a/", "new_path": "/memories/a/b/c"},
         "Cannot rename /memories/a/ to a subdirectory of itself, /memories/a/b/c"),
     err({"command": "rename", "old_path": "/memories/a/f.txt", "new_path": "/memories/a/f.txt/x"},
         "Cannot rename /memories/a/f.txt to a subdirectory of itself, /memories/a/f.txt/x"),
     ok(view("/memories"), listing("/memories", ("4K", "a/"), ("1B", "a/f.txt"))))

case("rename_destination_parent_is_file_no_side_effects",
     create("/memories/f.txt", "f"),
     create("/memories/g.txt", "g"),
     err({"command": "rename", "old_path": "/memories/g.txt", "new_path": "/memories/f.txt/g.txt"},
         "A parent of /memories/f.txt/g.txt is a file, not a directory"),
     err({"command": "rename", "old_path": "/memories/g.txt", "new_path": "/memories/f.txt/d/e.txt"},
         "A parent of /memories/f.txt/d/e.txt is a file, not a directory"),
     ok(view("/memories"), listing("/memories", ("1B", "f.txt"), ("1B", "g.txt"))),
     ok(view("/memories/g.txt"), view_file("/memories/g.txt", "g")))

case("rename_check_order_and_no_side_effects",
     create("/memories/f.txt", "f"),
     err({"command": "rename", "old_path": "/memories/nope.txt", "new_path": "/memories/newdir/deep/x.txt"},
         "The path /memories/nope.txt does not exist"),
     err({"command": "rename", "old_path": "/memories/nope.txt", "new_path": "/memories/f.txt"},
         "The destination /memories/f.txt already exists"),
     err({"command": "rename", "old_path": "/memories/nope", "new_path": "/memories/nope/sub"},
         "The path /memories/nope does not exist"),
     err({"command": "rename", "old_path": "/memories/f.txt", "new_path": "/memories/f.txt"},
         "The destination /memories/f.txt already exists"),
     ok(view("/memories"), listing("/memories", ("1B", "f.txt"))))

case("rename_echoes_raw_paths_and_creates_parents",
     create("/memories/a.txt", "abc"),
     ok({"command": "rename", "old_path": "/memories//a.txt", "new_path": "/memories/./b/c.txt"},
        "Successfully renamed /memories//a.txt to /memories/./b/c.txt"),
     ok(view("/memories"), listing("/memories", ("4K", "b/"), ("3B", "b/c.txt"))),
     ok({"command": "rename", "old_path": "/memories/b", "new_path": "/memories/x/y/b"},
        "Successfully renamed /memories/b to /memories/x/y/b"),
     ok(view("/memories"), listing("/memories", ("4K", "x/"), ("4K", "x/y/"))),
     ok(view("/memories/x/y/b/c.txt"), view_file("/memories/x/y/b/c.txt", "abc")))

# C20 moves the subtree by its keys; names of two to four UTF-8 bytes per
# character must move whole (the new key is the new path plus the rest).
case("rename_directory_with_multibyte_names_moves_its_files",
     create("/memories/\u00e9/a.txt", "old\n"),
     create("/memories/\u65e5\u672c/\U0001f600/b.md", "b\n"),
     ok({"command": "rename", "old_path": "/memories/\u00e9", "new_path": "/memories/b"},
        "Successfully renamed /memories/\u00e9 to /memories/b"),
     ok({"command": "rename", "old_path": "/memories/\u65e5\u672c", "new_path": "/memories/\u00e9\u00e9"},
        "Successfully renamed /memories/\u65e5\u672c to /memories/\u00e9\u00e9"),
     ok(view("/memories/b/a.txt"), view_file("/memories/b/a.txt", "old\n")),
     err(view("/memories/ba.txt"),
         "The path /memories/ba.txt does not exist. Please provide a valid path."),
     ok(view("/memories"), listing("/memories", ("4K", "b/"), ("4B", "b/a.txt"),
                                   ("4K", "\u00e9\u00e9/"), ("4K", "\u00e9\u00e9/\U0001f600/"))),
     ok({"command": "str_replace", "path": "/memories/\u00e9\u00e9/\U0001f600/b.md",
         "old_str": "b", "new_str": "c"}, snippet("c\n", 0)),
     create("/memories/b/a.txt", "new\n"),
     ok(view("/memories/b/a.txt"), view_file("/memories/b/a.txt", "new\n")))

# ---- dispatch (C21) -------------------------------------------------------
case("command_missing_not_a_string_or_unknown",
     err({"path": "/memories"}, "Parameter `command` is required"),
     err({"command": None, "path": "/memories"}, "Parameter `command` is required"),
     err({"command": 5, "path": "/memories"}, "Parameter `command` is required"),
     err({"command": ["view"], "path": "/memories"}, "Parameter `command` is required"),
     err({"command": "View", "path": "/memories"}, "Unknown command: View"),
     err({"command": "", "path": "/memories"}, "Unknown command: "),
     err({"command": "undo_edit", "path": "/memories"}, "Unknown command: undo_edit"),
     err({"command": "unknown", "path": 5}, "Unknown command: unknown"))

case("missing_parameters_in_contract_order",
     err({"command": "view"}, param("path", "view")),
     err({"command": "view", "path": 7}, param("path", "view")),
     err({"command": "create"}, param("path", "create")),
     err({"command": "create", "file_text": "x"}, param("path", "create")),
     err({"command": "create", "path": "/memories/a"}, param("file_text", "create")),
     err({"command": "create", "path": "/memories/a", "file_text": None}, param("file_text", "create")),
     # A path argument is validated before the parameters after it (11.3).
     err({"command": "create", "path": "/outside", "file_text": 3},
         "Path must start with /memories, got: /outside"),
     err({"command": "insert", "path": "/memories/../a", "insert_text": "x"},
         "Path /memories/../a would escape /memories directory"),
     err({"command": "rename", "old_path": "/memoriesX", "new_path": 1},
         "Path /memoriesX would escape /memories directory"),
     err({"command": "rename", "old_path": "/memories/a", "new_path": "/tmp/b"},
         "Path must start with /memories, got: /tmp/b"),
     err({"command": "str_replace"}, param("path", "str_replace")),
     err({"command": "str_replace", "old_str": "a", "new_str": "b"}, param("path", "str_replace")),
     err({"command": "str_replace", "path": "/memories/a"}, param("old_str", "str_replace")),
     err({"command": "str_replace", "path": "/memories/a", "new_str": "b"}, param("old_str", "str_replace")),
     err({"command": "insert"}, param("path", "insert")),
     err({"command": "insert", "path": "/memories/a"}, param("insert_line", "insert")),
     err({"command": "insert", "path": "/memories/a", "insert_text": "x"}, param("insert_line", "insert")),
     err({"command": "insert", "path": "/memories/a", "insert_line": 0}, param("insert_text", "insert")),
     err({"command": "insert", "path": "/memories/a", "insert_line": 0, "insert_text": 1},
         param("insert_text", "insert")),
     err({"command": "delete"}, param("path", "delete")),
     err({"command": "delete", "path": ["/memories/a"]}, param("path", "delete")),
     err({"command": "rename"}, param("old_path", "rename")),
     err({"command": "rename", "path": "/memories/a", "new_path": "/memories/b"}, param("old_path", "rename")),
     err({"command": "rename", "new_path": "/memories/b"}, param("old_path", "rename")),
     err({"command": "rename", "old_path": "/memories/a"}, param("new_path", "rename")),
     err({"command": "rename", "old_path": "/memories/a", "new_path": False}, param("new_path", "rename")),
     ok(view("/memories"), listing("/memories")))

case("create_existing_file_twice_then_edit_keeps_latest",
     create("/memories/v.txt", "one"),
     create("/memories/v.txt", "two"),
     create("/memories/v.txt", "two"),
     ok({"command": "str_replace", "path": "/memories/v.txt", "old_str": "two", "new_str": "three"},
        snippet("three", 0)),
     ok(view("/memories/v.txt"), view_file("/memories/v.txt", "three")))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = os.path.join(root, "tests", "vectors", "extra-vectors.json")
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    for c in CASES:
        for s in c["steps"]:
            assert s["output"] is not None, c["name"]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(CASES, f, ensure_ascii=False, indent=1)
    print("wrote {} cases to {}".format(len(CASES), out))


if __name__ == "__main__":
    main()
