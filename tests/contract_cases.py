# Cases built from the memory-tool contract's rules (not only its examples). Each case: (name, [steps], opts)
# A step is a dict (JSON command) or a raw string (sent verbatim as the batch line).
# opts: {"amb": "reason"} marks cases where the contract is silent/ambiguous (reported separately);
#       {"hand": {step_index: (content, is_error)}} hand-computed expectations cross-checking the model.
def C(p, t="x"): return {"command": "create", "path": p, "file_text": t}
def V(p, vr=None):
    d = {"command": "view", "path": p}
    if vr is not None: d["view_range"] = vr
    return d
def S(p, o, n=None, omit=False):
    d = {"command": "str_replace", "path": p, "old_str": o}
    if not omit: d["new_str"] = n
    return d
def I(p, l, t): return {"command": "insert", "path": p, "insert_line": l, "insert_text": t}
def D(p): return {"command": "delete", "path": p}
def R(o, n): return {"command": "rename", "old_path": o, "new_path": n}
ROOTV = V("/memories")
H = "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n"
F = "Here's the content of %s with line numbers:\n"
E = lambda m: ("Error: " + m, True)
OK = lambda m: (m, False)
FIVE = "L1\nL2\nL3\nL4\nL5"
CASES = []
def case(name, steps, **opts): CASES.append((name, steps, opts))

# ---------------- paths
case("path_trailing_slash_create_makes_file", [C("/memories/x/", "hi"), ROOTV, V("/memories/x")],
     hand={0: OK("File created successfully at: /memories/x/"), 1: OK(H % "/memories" + "4K\t/memories\n2B\t/memories/x")})
case("path_double_slash_create", [C("/memories//a//b.txt", "q"), ROOTV, V("/memories/a/b.txt")])
case("path_dot_segments_ok", [C("/memories/./a/./b.txt", "dot"), V("/memories/a/b.txt"), V("/memories/./a")])
case("path_view_root_dot", [C("/memories/f", "1"), V("/memories/.")],
     hand={1: OK(H % "/memories/." + "4K\t/memories/.\n1B\t/memories/./f")})
case("path_view_root_double_slash", [C("/memories/f", "1"), V("/memories//")])
case("path_view_root_dot_slash", [C("/memories/f", "1"), V("/memories/./")])
case("path_internal_dotdot_rejected", [C("/memories/a/b.txt"), V("/memories/a/../a/b.txt")],
     hand={1: E("Path /memories/a/../a/b.txt would escape /memories directory")})
case("path_trailing_dotdot", [C("/memories/a/b.txt"), D("/memories/a/..")])
case("path_dotdot_only_segment", [V("/memories/../memories")])
case("path_triple_dot_is_a_name", [C("/memories/.../x", "t"), V("/memories/.../x"), ROOTV, V("/memories/...")])
case("path_dotdot_inside_name", [C("/memories/a..b", "t"), C("/memories/..a", "u"), ROOTV])
case("path_percent_2e_lower", [C("/memories/%2e%2e/x", "t")], hand={0: E("Path /memories/%2e%2e/x would escape /memories directory")})
case("path_percent_2E_upper", [V("/memories/%2E%2E")])
case("path_percent_2f", [C("/memories/a%2Fb", "t")])
case("path_percent_5c", [C("/memories/a%5cb", "t")])
case("path_percent_mixed_case_2F", [D("/memories/a%2fb")])
case("path_percent_other_ok", [C("/memories/%41.txt", "pct"), C("/memories/50%.txt", "p"), ROOTV])
case("path_percent_double_encoded_ok", [C("/memories/%252e", "t"), V("/memories/%252e")])
case("path_backslash_rejected", [C("/memories/a\\b", "t")], hand={0: E("Path /memories/a\\b would escape /memories directory")})
case("path_backslash_dotdot", [V("/memories\\..\\etc")])
case("path_nul_rejected", [C("/memories/a\u0000b", "t")])
case("path_nul_in_rename_new", [C("/memories/a"), R("/memories/a", "/memories/b\u0000")])
case("path_memories_tab_suffix", [V("/memories\t")])
case("path_memories_dot_suffix", [V("/memories.txt")])
case("path_memoriesdotdot", [V("/memories..")])
case("path_uppercase_prefix", [V("/Memories/x")], hand={0: E("Path must start with /memories, got: /Memories/x")})
case("path_leading_space", [V(" /memories")])
case("path_empty_string", [V("")], hand={0: E("Path must start with /memories, got: ")})
case("path_double_leading_slash", [V("//memories")])
case("path_prefix_only_memorie", [C("/memorie", "x")])
case("path_unicode_name", [C("/memories/日本語/メモ.md", "内容"), ROOTV, V("/memories/日本語/メモ.md")])
case("path_nfc_vs_nfd_distinct", [C("/memories/\u00e9", "nfc"), C("/memories/e\u0301", "nfd!"), ROOTV])
case("path_case_distinct", [C("/memories/A.txt", "A"), C("/memories/a.txt", "aa"), V("/memories/A.txt"), ROOTV])
case("path_long_segment_255", [C("/memories/" + "n" * 255, "x"), ROOTV])
case("path_long_segment_1000", [C("/memories/" + "L" * 1000, "x"), V("/memories/" + "L" * 1000)])
case("path_deep_50_levels", [C("/memories/" + "/".join("d%d" % i for i in range(50)) + "/f", "x"),
                             V("/memories/" + "/".join("d%d" % i for i in range(50)) + "/f"), ROOTV])
case("path_space_in_name", [C("/memories/my notes.txt", "s"), ROOTV])
case("path_newline_in_name", [C("/memories/a\nb", "s"), ROOTV])
case("path_emoji_name", [C("/memories/😀.txt", "e"), V("/memories/😀.txt")])
case("path_file_trailing_slash_view", [C("/memories/f.txt", "abc"), V("/memories/f.txt/")],
     hand={1: OK(F % "/memories/f.txt/" + "     1\tabc")})
case("path_file_trailing_dot_view", [C("/memories/f.txt", "abc"), V("/memories/f.txt/.")])
case("path_dir_trailing_slash_view", [C("/memories/d/x.txt", "1"), V("/memories/d/")],
     hand={1: OK(H % "/memories/d/" + "4K\t/memories/d/\n1B\t/memories/d//x.txt")})
case("path_child_of_file_view", [C("/memories/f.txt"), V("/memories/f.txt/child")],
     hand={1: E("The path /memories/f.txt/child does not exist. Please provide a valid path.")})
case("path_wrong_type_number", [{"command": "view", "path": 5}], hand={0: E("Parameter `path` is required for command: view")})
case("path_wrong_type_null", [{"command": "delete", "path": None}])
case("path_wrong_type_list", [{"command": "create", "path": ["/memories/a"], "file_text": "x"}])
case("path_escape_precedes_param_check", [{"command": "create", "path": "/etc/x"}],
     amb="order of C21 parameter check vs C4 path check")

# ---------------- view on files / view_range
case("vr_neg_end_minus2", [C("/memories/r", FIVE), V("/memories/r", [2, -2])],
     hand={1: OK(F % "/memories/r" + "     2\tL2\n     3\tL3")})
case("vr_end_minus5_empty", [C("/memories/r", FIVE), V("/memories/r", [1, -5])])
case("vr_end_minus100", [C("/memories/r", FIVE), V("/memories/r", [1, -100])])
case("vr_zero_zero", [C("/memories/r", FIVE), V("/memories/r", [0, 0])], hand={1: OK(F % "/memories/r")})
case("vr_minus1_minus1", [C("/memories/r", FIVE), V("/memories/r", [-1, -1])])
case("vr_start_gt_end", [C("/memories/r", FIVE), V("/memories/r", [4, 2])])
case("vr_start_eq_n_plus1", [C("/memories/r", FIVE), V("/memories/r", [6, -1])])
case("vr_start_n_minus1", [C("/memories/r", FIVE), V("/memories/r", [5, -1])])
case("vr_end_zero", [C("/memories/r", FIVE), V("/memories/r", [1, 0])])
case("vr_empty_array", [C("/memories/r", FIVE), V("/memories/r", [])])
case("vr_null", [C("/memories/r", FIVE), V("/memories/r") | {"view_range": None}])
case("vr_string", [C("/memories/r", FIVE), V("/memories/r", "2,3")])
case("vr_object", [C("/memories/r", FIVE), V("/memories/r", {"a": 1})])
case("vr_strings_in_array", [C("/memories/r", FIVE), V("/memories/r", ["2", "3"])])
case("vr_null_in_array", [C("/memories/r", FIVE), V("/memories/r", [None, 3])])
case("vr_bool_in_array", [C("/memories/r", FIVE), V("/memories/r", [True, 2])],
     amb="JSON true is not an integer; ignored under 'anything else is ignored'")
case("vr_float_in_array", [C("/memories/r", FIVE), V("/memories/r", [2.5, 3])])
case("vr_float_integral", [C("/memories/r", FIVE), '{"command":"view","path":"/memories/r","view_range":[2.0,3]}'],
     amb="is 2.0 a JSON integer?")
case("vr_huge_numbers", [C("/memories/r", FIVE), V("/memories/r", [2, 2**40])])
case("vr_huge_start", [C("/memories/r", FIVE), V("/memories/r", [2**40, -1])])
case("vr_int64_overflow", [C("/memories/r", FIVE), '{"command":"view","path":"/memories/r","view_range":[1,99999999999999999999]}'],
     amb="integer beyond int64")
case("vr_on_empty_file_1_1", [C("/memories/e", ""), V("/memories/e", [1, 1])], hand={1: OK(F % "/memories/e" + "     1\t")})
case("vr_on_empty_file_2_minus1", [C("/memories/e", ""), V("/memories/e", [2, -1])])
case("vr_on_dir_bad_range", [C("/memories/d/a"), V("/memories/d", [-5, "x"])])
case("vr_on_nonexistent", [V("/memories/nope", [1, 2])])
case("view_no_trailing_newline", [C("/memories/n", "a\nb"), V("/memories/n")])
case("view_crlf_preserved", [C("/memories/c", "a\r\nb\r\n"), V("/memories/c")],
     hand={1: OK(F % "/memories/c" + "     1\ta\r\n     2\tb\r\n     3\t")})
case("view_lone_cr_not_split", [C("/memories/c", "a\rb\rc"), V("/memories/c")])
case("view_unicode_separators_not_split", [C("/memories/c", "a\u2028b\u2029c\x85d\x0be\x0cf"), V("/memories/c")])
case("view_tabs_content", [C("/memories/t", "\t\t\n\tx\t"), V("/memories/t")])
case("view_many_blank_lines", [C("/memories/b", "\n\n\n"), V("/memories/b")])
case("view_nul_in_content", [C("/memories/z", "a\u0000b"), V("/memories/z"), ROOTV])
case("view_lone_surrogate_content", [C("/memories/s", "a\udcffb"), V("/memories/s")],
     amb="lone surrogate escape in JSON: not valid UTF-8 text")
case("view_emoji_content", [C("/memories/e", "👨‍👩‍👧 family\n🏳️‍🌈"), V("/memories/e"), ROOTV])
case("view_999_lines", [C("/memories/l", "\n".join("x%d" % i for i in range(1, 1000))), V("/memories/l", [998, -1])])
case("view_1000_lines", [C("/memories/l", "\n".join("x%d" % i for i in range(1, 1001))), V("/memories/l", [999, -1])],
     hand={1: OK(F % "/memories/l" + "   999\tx999\n  1000\tx1000")})
case("view_100000_lines", [C("/memories/l", "\n".join("y" for i in range(1, 100001))), V("/memories/l", [99999, -1])],
     hand={1: OK(F % "/memories/l" + " 99999\ty\n100000\ty")})
case("view_999999_lines_ok", [C("/memories/l", "\n" * 999998), V("/memories/l", [999998, -1]), ROOTV])
case("view_1000000_lines_error", [C("/memories/l", "\n" * 999999), V("/memories/l"), V("/memories/l", [1, 1]), ROOTV],
     hand={1: E("File /memories/l exceeds maximum line limit of 999,999 lines."),
           2: E("File /memories/l exceeds maximum line limit of 999,999 lines.")})
case("view_full_1000_line_file", [C("/memories/m", "\n".join(str(i) for i in range(1, 1001)) + "\n"), V("/memories/m")])
case("view_hidden_dir_directly", [C("/memories/.cfg/a.txt", "1"), C("/memories/.cfg/.b", "2"), V("/memories/.cfg")])
case("view_node_modules_directly", [C("/memories/node_modules/p/i.js", "1"), V("/memories/node_modules")])

# ---------------- listings
case("list_sort_mixed", [C("/memories/" + n, "1") for n in
     ["b", "B", "a", "A", "a.txt", "a-b", "a_b", "a b", "ab", "~t", "Z", "0", "é", "Ａ", "😀", "!x", "[x", "{x", "aa"]] + [ROOTV])
case("list_sort_dir_vs_file_prefix", [C("/memories/a/in", "1"), C("/memories/a!", "2"), C("/memories/a.txt", "3"), C("/memories/a0", "4"), ROOTV],
     hand={4: OK(H % "/memories" + "4K\t/memories\n4K\t/memories/a/\n1B\t/memories/a/in\n1B\t/memories/a!\n1B\t/memories/a.txt\n1B\t/memories/a0")})
case("list_sort_emoji_vs_fullwidth", [C("/memories/😀.txt", "1"), C("/memories/Ａ.txt", "2"), ROOTV],
     hand={2: OK(H % "/memories" + "4K\t/memories\n1B\t/memories/Ａ.txt\n1B\t/memories/😀.txt")})
case("list_sort_nested_per_level", [C("/memories/x/b", "1"), C("/memories/x/a/z", "2"), C("/memories/x-", "3"), C("/memories/x/A", "4"), ROOTV])
case("list_depth_from_subdir", [C("/memories/a/b/c/d/e.txt"), C("/memories/a/b/f.txt"), C("/memories/a/b/c/g.txt"), V("/memories/a"), V("/memories/a/b"), V("/memories/a/b/c/d")])
case("list_hidden_at_depth2", [C("/memories/d/.h"), C("/memories/d/v"), C("/memories/d/.hd/x"), ROOTV])
case("list_node_modules_file_hidden", [C("/memories/node_modules", "file!"), C("/memories/node_modules.txt", "1"), C("/memories/Node_modules/x", "2"), ROOTV],
     hand={3: OK(H % "/memories" + "4K\t/memories\n4K\t/memories/Node_modules/\n1B\t/memories/Node_modules/x\n1B\t/memories/node_modules.txt")})
case("list_node_modules_depth2", [C("/memories/p/node_modules/x"), C("/memories/p/q"), ROOTV])
case("list_dot_only_names", [C("/memories/.../x"), C("/memories/.a"), C("/memories/b."), ROOTV])
case("list_root_trailing_slash_nested", [C("/memories/d/f", "12"), V("/memories/")],
     hand={1: OK(H % "/memories/" + "4K\t/memories/\n4K\t/memories//d/\n2B\t/memories//d/f")})
case("list_subdir_double_slash_path", [C("/memories/d/f", "12"), V("/memories//d")])
case("list_empty_subdir", [C("/memories/d/e/f"), D("/memories/d/e/f"), V("/memories/d"), V("/memories/d/e")])
case("list_view_range_ignored_negative", [C("/memories/k", "1"), V("/memories", [-1, -1])])
case("list_multibyte_sizes", [C("/memories/u", "日本"), C("/memories/e", "😀😀"), ROOTV],
     hand={2: OK(H % "/memories" + "4K\t/memories\n8B\t/memories/e\n6B\t/memories/u")})
SIZES = [2, 1000, 1025, 1075, 1076, 1126, 1127, 2048, 3328, 3840, 10239, 10240, 102400, 1047552, 1048320, 1048575, 1048576, 1048577, 1101004, 1101005, 1572864, 3407872]
for n in SIZES:
    case("size_%d" % n, [C("/memories/s", "x" * n), ROOTV])
case("size_after_str_replace_grows", [C("/memories/s", "ab"), S("/memories/s", "b", "b" * 1500), ROOTV])
case("size_after_insert", [C("/memories/s", "x" * 1023), I("/memories/s", 1, ""), ROOTV])
case("size_crlf_counts_bytes", [C("/memories/s", "a\r\n" * 512), ROOTV])

# ---------------- create
case("create_root_slash", [C("/memories/", "x")], hand={0: E("File /memories/ already exists")})
case("create_root_dot", [C("/memories/.", "x")])
case("create_root_double_slash", [C("/memories//", "x")])
case("create_existing_dir_trailing_slash", [C("/memories/d/x"), C("/memories/d/", "y")], hand={1: E("File /memories/d/ already exists")})
case("create_existing_file_via_alias", [C("/memories/f", "one"), C("/memories/./f/", "two"), V("/memories/f")])
case("create_parent_file_deep", [C("/memories/f"), C("/memories/f/x/y/z", "q"), ROOTV],
     hand={1: E("A parent of /memories/f/x/y/z is a file, not a directory")})
case("create_parent_file_midway", [C("/memories/a/f"), C("/memories/a/f/g", "q"), V("/memories/a")])
case("create_missing_file_text", [{"command": "create", "path": "/memories/m"}, ROOTV],
     hand={0: E("Parameter `file_text` is required for command: create")})
case("create_null_file_text", [{"command": "create", "path": "/memories/m", "file_text": None}, ROOTV])
case("create_number_file_text", [{"command": "create", "path": "/memories/m", "file_text": 42}, ROOTV])
case("create_missing_path", [{"command": "create", "file_text": "x"}], hand={0: E("Parameter `path` is required for command: create")})
case("create_missing_both", [{"command": "create"}])
case("create_whitespace_only", [C("/memories/w", " \n\t "), V("/memories/w")])
case("create_after_delete", [C("/memories/f", "one"), D("/memories/f"), C("/memories/f", "two"), V("/memories/f")])
case("create_file_where_deleted_dir_was", [C("/memories/d/x"), D("/memories/d"), C("/memories/d", "file"), ROOTV])
case("create_hidden_then_list", [C("/memories/.h/x"), C("/memories/v"), ROOTV])
case("create_extra_params_ignored", [{"command": "create", "path": "/memories/x", "file_text": "t", "view_range": [1, 2], "foo": 1}],
     amb="extra parameters: contract silent")
case("create_big_3mb", [C("/memories/big", ("0123456789abcdef" * 64 + "\n") * 3000), ROOTV, V("/memories/big", [2999, -1])])

# ---------------- str_replace
case("sr_old_equals_new", [C("/memories/s", "a\nb\nc"), S("/memories/s", "b", "b"), V("/memories/s")])
case("sr_zero_matches_multiline", [C("/memories/s", "a\nb"), S("/memories/s", "a\nc", "x")],
     hand={1: E("No replacement was performed, old_str `a\nc` did not appear verbatim in /memories/s.")})
case("sr_multiline_two_matches", [C("/memories/s", "x\ny\nx\ny\n"), S("/memories/s", "x\ny", "z")],
     hand={1: E("No replacement was performed. Multiple occurrences of old_str `x\ny` in lines: 1, 3. Please ensure it is unique")})
case("sr_overlap_aaaa", [C("/memories/s", "aaaa"), S("/memories/s", "aa", "b")],
     hand={1: E("No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1, 1. Please ensure it is unique")})
case("sr_overlap_aaaaa_3", [C("/memories/s", "a\naaaaa"), S("/memories/s", "aaa", "b")])
case("sr_overlap_abab", [C("/memories/s", "ababa\nab"), S("/memories/s", "aba", "X")])
case("sr_empty_old_on_nonempty", [C("/memories/s", "ab\nc"), S("/memories/s", "", "Z")],
     hand={1: E("No replacement was performed. Multiple occurrences of old_str `` in lines: 1, 1, 1, 2, 2. Please ensure it is unique")})
case("sr_empty_old_codepoints", [C("/memories/s", "é😀\n"), S("/memories/s", "", "Z")],
     hand={1: E("No replacement was performed. Multiple occurrences of old_str `` in lines: 1, 1, 1, 2. Please ensure it is unique")})
case("sr_empty_old_empty_file_missing_new", [C("/memories/s", ""), S("/memories/s", "", omit=True), V("/memories/s")])
case("sr_new_str_null", [C("/memories/s", "keep DROP keep"), S("/memories/s", " DROP", None), V("/memories/s")])
case("sr_new_str_number", [C("/memories/s", "a b"), S("/memories/s", "b", 5)], amb="new_str wrong type (optional param)")
case("sr_missing_old_str", [C("/memories/s", "a"), {"command": "str_replace", "path": "/memories/s", "new_str": "b"}],
     hand={1: E("Parameter `old_str` is required for command: str_replace")})
case("sr_old_str_null", [C("/memories/s", "a"), {"command": "str_replace", "path": "/memories/s", "old_str": None, "new_str": "b"}])
case("sr_old_str_number", [C("/memories/s", "1"), {"command": "str_replace", "path": "/memories/s", "old_str": 1, "new_str": "b"}])
case("sr_missing_path", [{"command": "str_replace", "old_str": "a", "new_str": "b"}])
case("sr_dollar_literal", [C("/memories/s", "price"), S("/memories/s", "price", "$& $$ $` $' $1 \\1"), V("/memories/s")])
case("sr_backticks_in_old_str_error", [C("/memories/s", "x"), S("/memories/s", "`y`", "z")])
case("sr_crlf_match", [C("/memories/s", "a\r\nb\r\nc\r\n"), S("/memories/s", "b\r\n", "B\r\n"), V("/memories/s")])
case("sr_match_starts_at_newline", [C("/memories/s", "1\n2\n3\n4\n5\n6"), S("/memories/s", "\n4", "\nfour")],
     hand={1: OK("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t1\n     2\t2\n     3\t3\n     4\tfour\n     5\t5")})
case("sr_delete_whole_content", [C("/memories/s", "a\nb\nc"), S("/memories/s", "a\nb\nc", ""), V("/memories/s")],
     hand={1: OK("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t")})
case("sr_shrinks_near_end", [C("/memories/s", "1\n2\n3\n4\n5\n6\n7"), S("/memories/s", "5\n6\n7", "X")])
case("sr_snippet_line_1000", [C("/memories/s", "\n".join("r%d" % i for i in range(1, 1101))), S("/memories/s", "r1000\n", "R1000\n")])
case("sr_whole_line_with_newline", [C("/memories/s", "a\nb\nc\n"), S("/memories/s", "b\n", "")])
case("sr_on_dir_trailing_slash", [C("/memories/d/x"), S("/memories/d/", "x", "y")])
case("sr_on_root", [S("/memories", "x", "y")], hand={0: E("The path /memories does not exist. Please provide a valid path.")})
case("sr_parent_is_file", [C("/memories/f"), S("/memories/f/g", "x", "y")])
case("sr_bad_path_escape", [S("/memories/../x", "a", "b")])
case("sr_unicode_case_not_folded", [C("/memories/s", "Straße"), S("/memories/s", "STRASSE", "x")])
case("sr_nfd_vs_nfc", [C("/memories/s", "caf\u00e9"), S("/memories/s", "cafe\u0301", "x")])
case("sr_trailing_slash_path_echo", [C("/memories/s", "q"), S("/memories/s/", "zz", "y")],
     hand={1: E("No replacement was performed, old_str `zz` did not appear verbatim in /memories/s/.")})
case("sr_multiple_then_view_unchanged", [C("/memories/s", "x x\nx"), S("/memories/s", "x", "y"), V("/memories/s")])
case("sr_new_str_many_lines", [C("/memories/s", "a\nb\nc"), S("/memories/s", "a", "1\n2\n3\n4\n5\n6")])
case("sr_old_str_whole_file_unicode", [C("/memories/s", "日本\n"), S("/memories/s", "本\n", "語"), V("/memories/s"), ROOTV])

# ---------------- insert
case("ins_at_end_no_trailing_nl", [C("/memories/i", "a"), I("/memories/i", 1, "b"), V("/memories/i")])
case("ins_at_0_on_no_nl", [C("/memories/i", "a"), I("/memories/i", 0, "b"), V("/memories/i")],
     hand={2: OK(F % "/memories/i" + "     1\tb\n     2\ta\n     3\t")})
case("ins_beyond_end_trailing_nl", [C("/memories/i", "a\nb\n"), I("/memories/i", 3, "c")],
     hand={1: E("Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]")})
case("ins_negative_large", [C("/memories/i", "a"), I("/memories/i", -100, "c")])
case("ins_huge_line", [C("/memories/i", "a"), I("/memories/i", 2**40, "c")])
case("ins_empty_text", [C("/memories/i", "a\nb"), I("/memories/i", 1, ""), V("/memories/i")])
case("ins_empty_text_empty_file", [C("/memories/i", ""), I("/memories/i", 0, ""), V("/memories/i"), ROOTV],
     hand={2: OK(F % "/memories/i" + "     1\t\n     2\t")})
case("ins_text_only_newlines", [C("/memories/i", "a"), I("/memories/i", 1, "\n\n\n"), V("/memories/i")])
case("ins_text_internal_blank", [C("/memories/i", "a"), I("/memories/i", 0, "x\n\ny\n\n"), V("/memories/i")])
case("ins_crlf_file_count", [C("/memories/i", "a\r\nb\r\n"), I("/memories/i", 3, "z")],
     hand={1: E("Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]")})
case("ins_crlf_text_kept", [C("/memories/i", "a\r\nb\r\n"), I("/memories/i", 1, "x\r\n"), V("/memories/i")])
case("ins_lone_cr_one_line", [C("/memories/i", "a\rb\rc"), I("/memories/i", 2, "z")],
     hand={1: E("Invalid `insert_line` parameter: 2. It should be within the range of lines of the file: [0, 1]")})
case("ins_u2028_not_line_break", [C("/memories/i", "a\u2028b"), I("/memories/i", 1, "c"), V("/memories/i")])
case("ins_only_newline_file", [C("/memories/i", "\n"), I("/memories/i", 1, "x"), V("/memories/i")])
case("ins_double_trailing_nl", [C("/memories/i", "a\n\n"), I("/memories/i", 2, "x"), V("/memories/i")])
case("ins_double_trailing_nl_range", [C("/memories/i", "a\n\n"), I("/memories/i", 3, "x")])
case("ins_line_string", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": "1", "insert_text": "b"}],
     hand={1: E("Parameter `insert_line` is required for command: insert")})
case("ins_line_float", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": 1.5, "insert_text": "b"}])
case("ins_line_float_integral", [C("/memories/i", "a"), '{"command":"insert","path":"/memories/i","insert_line":1.0,"insert_text":"b"}'],
     amb="is 1.0 an integer?")
case("ins_line_bool", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": True, "insert_text": "b"}])
case("ins_line_null", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": None, "insert_text": "b"}])
case("ins_missing_line", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_text": "b"}, V("/memories/i")])
case("ins_missing_text", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": 0}])
case("ins_text_number", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": 0, "insert_text": 7}])
case("ins_missing_both", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i"}])
case("ins_on_root", [I("/memories", 0, "x")], hand={0: E("The path /memories does not exist")})
case("ins_on_dir_slash", [C("/memories/d/x"), I("/memories/d/", 0, "x")])
case("ins_missing_file_bad_line", [I("/memories/nope", -1, "x")], hand={0: E("The path /memories/nope does not exist")})
case("ins_bad_path", [I("/tmp/x", 0, "x")])
case("ins_then_str_replace", [C("/memories/i", "a\nc"), I("/memories/i", 1, "b"), S("/memories/i", "c\n", "C\n"), V("/memories/i")])
case("ins_into_1000_line_file", [C("/memories/i", "".join("%d\n" % i for i in range(1, 1000))), I("/memories/i", 999, "last"), V("/memories/i", [998, -1])])
case("ins_path_echo_raw", [C("/memories/i", "a"), I("/memories//i", 0, "z")], hand={1: OK("The file /memories//i has been edited.")})

# ---------------- delete
case("del_root_dot", [D("/memories/.")], hand={0: E("Cannot delete the /memories directory itself")})
case("del_root_double_slash", [D("/memories//")])
case("del_root_dot_slash_dot", [D("/memories/./.")])
case("del_root_keeps_store", [C("/memories/k"), D("/memories/"), ROOTV])
case("del_dir_with_contents_deep", [C("/memories/a/b/c/d"), C("/memories/a/x"), C("/memories/ab"), D("/memories/a"), ROOTV, V("/memories/a/b")])
case("del_prefix_sibling_untouched", [C("/memories/a/x"), C("/memories/ab/y"), C("/memories/a.txt"), D("/memories/a"), ROOTV])
case("del_twice", [C("/memories/f"), D("/memories/f"), D("/memories/f")])
case("del_trailing_slash_file", [C("/memories/f"), D("/memories/f/"), ROOTV], hand={1: OK("Successfully deleted /memories/f/")})
case("del_child_of_file", [C("/memories/f"), D("/memories/f/g")], hand={1: E("The path /memories/f/g does not exist")})
case("del_hidden", [C("/memories/.h"), D("/memories/.h"), V("/memories/.h")])
case("del_node_modules_dir", [C("/memories/node_modules/x"), D("/memories/node_modules"), V("/memories/node_modules")])
case("del_bad_prefix", [D("/memoriesX")])
case("del_percent", [D("/memories/%2E")])
case("del_missing_path", [{"command": "delete"}], hand={0: E("Parameter `path` is required for command: delete")})
case("del_then_parent_listing", [C("/memories/p/c/f"), D("/memories/p/c"), ROOTV])
case("del_empty_dir", [C("/memories/d/f"), D("/memories/d/f"), D("/memories/d"), ROOTV])

# ---------------- rename
case("ren_to_root", [C("/memories/f"), R("/memories/f", "/memories")], hand={1: E("The destination /memories already exists")})
case("ren_to_root_slash", [C("/memories/f"), R("/memories/f", "/memories/")])
case("ren_root_dot_old", [R("/memories/.", "/memories/x")], hand={0: E("Cannot rename the /memories directory itself")})
case("ren_root_to_root", [R("/memories", "/memories")], hand={0: E("Cannot rename the /memories directory itself")})
case("ren_root_to_existing", [C("/memories/e"), R("/memories//", "/memories/e")])
case("ren_root_invalid_new", [R("/memories", "/etc/x")], hand={0: E("Path must start with /memories, got: /etc/x")})
case("ren_both_invalid", [R("/a", "/b")], hand={0: E("Path must start with /memories, got: /a")})
case("ren_old_escape_new_bad_prefix", [R("/memories/..", "/x")])
case("ren_missing_source_existing_dest", [C("/memories/e"), R("/memories/nope", "/memories/e")],
     hand={1: E("The destination /memories/e already exists")})
case("ren_dir_into_own_subdir", [C("/memories/a/x"), R("/memories/a", "/memories/a/sub"), ROOTV],
     hand={1: E("Cannot rename /memories/a to a subdirectory of itself, /memories/a/sub")})
case("ren_dir_into_own_deep_subdir", [C("/memories/a/x"), R("/memories/a/", "/memories/a/b/c"), ROOTV])
case("ren_dir_to_itself_slash", [C("/memories/a/x"), R("/memories/a", "/memories/a/")],
     hand={1: E("The destination /memories/a/ already exists")})
case("ren_dir_into_existing_subdir_path", [C("/memories/a/x/y"), R("/memories/a", "/memories/a/x")])
case("ren_dir_to_prefix_sibling", [C("/memories/a/x"), R("/memories/a", "/memories/ab"), ROOTV],
     hand={1: OK("Successfully renamed /memories/a to /memories/ab")})
case("ren_file_under_itself", [C("/memories/f"), R("/memories/f", "/memories/f/g")],
     hand={1: E("Cannot rename /memories/f to a subdirectory of itself, /memories/f/g")})
case("ren_parent_is_file", [C("/memories/f"), C("/memories/g"), R("/memories/g", "/memories/f/sub/g"), ROOTV],
     hand={2: E("A parent of /memories/f/sub/g is a file, not a directory")})
case("ren_parent_is_file_no_side_effect", [C("/memories/d/f"), C("/memories/g"), R("/memories/g", "/memories/d/f/x"), R("/memories/g", "/memories/n1/n2/f/x"), ROOTV])
case("ren_missing_source_nested_dest_no_dirs", [R("/memories/nope", "/memories/a/b/c"), ROOTV])
case("ren_subtree_then_view_old", [C("/memories/p/a"), C("/memories/p/s/b"), R("/memories/p", "/memories/q/r"), V("/memories/p"), V("/memories/q"), V("/memories/q/r/s/b")])
case("ren_hidden_to_visible", [C("/memories/.h", "hid"), R("/memories/.h", "/memories/vis"), ROOTV])
case("ren_visible_to_hidden", [C("/memories/v", "v"), R("/memories/v", "/memories/.v"), ROOTV])
case("ren_echo_raw_paths", [C("/memories/a", "1"), R("/memories//a", "/memories/./b/"), ROOTV],
     hand={1: OK("Successfully renamed /memories//a to /memories/./b/")})
case("ren_content_preserved_then_edit", [C("/memories/a", "x\ny"), R("/memories/a", "/memories/b"), S("/memories/b", "y", "Y"), I("/memories/b", 0, "w"), V("/memories/b")])
case("ren_back_and_forth", [C("/memories/a", "1"), R("/memories/a", "/memories/b"), R("/memories/b", "/memories/a"), ROOTV, V("/memories/a")])
case("ren_empty_dir", [C("/memories/d/f"), D("/memories/d/f"), R("/memories/d", "/memories/e"), ROOTV])
case("ren_into_existing_dir_new_name", [C("/memories/d/x"), C("/memories/f", "ff"), R("/memories/f", "/memories/d/f"), V("/memories/d")])
case("ren_file_to_trailing_slash", [C("/memories/f", "ff"), R("/memories/f", "/memories/g/"), ROOTV, V("/memories/g")])
case("ren_missing_new_path", [C("/memories/f"), {"command": "rename", "old_path": "/memories/f"}],
     hand={1: E("Parameter `new_path` is required for command: rename")})
case("ren_missing_both", [{"command": "rename"}], hand={0: E("Parameter `old_path` is required for command: rename")})
case("ren_path_instead_of_old_path", [C("/memories/f"), {"command": "rename", "path": "/memories/f", "new_path": "/memories/g"}])
case("ren_new_path_number", [C("/memories/f"), {"command": "rename", "old_path": "/memories/f", "new_path": 1}])
case("ren_new_backslash", [C("/memories/f"), R("/memories/f", "/memories/a\\b")])
case("ren_dest_child_of_missing_source", [R("/memories/a", "/memories/a/b")],
     amb="old missing and new inside old: step 3 (not exist) precedes step 4")

# ---------------- dispatch
case("disp_missing_command", [{"path": "/memories"}], hand={0: E("Parameter `command` is required")})
case("disp_empty_object", ["{}"])
case("disp_unknown_uppercase", [{"command": "VIEW", "path": "/memories"}], hand={0: E("Unknown command: VIEW")})
case("disp_unknown_empty", [{"command": ""}], hand={0: E("Unknown command: ")})
case("disp_unknown_no_path", [{"command": "undo_edit"}])
case("disp_unknown_spaces", [{"command": " view"}])
case("disp_command_null", [{"command": None, "path": "/memories"}], amb="command present but null")
case("disp_command_number", [{"command": 3, "path": "/memories"}], amb="command wrong type")
case("disp_view_extra_params", [{"command": "view", "path": "/memories", "file_text": "x", "old_str": "y"}], amb="extra params")
case("disp_str_replace_unknown_keys", [C("/memories/s", "ab"), {"command": "str_replace", "path": "/memories/s", "old_str": "a", "new_str": "A", "x": [1]}])
case("disp_json_array", ["[1,2]"], amb="non-object JSON")
case("disp_invalid_json", ["{not json"], amb="invalid JSON")
case("disp_duplicate_keys", ['{"command":"create","path":"/memories/a","path":"/memories/b","file_text":"t"}', ROOTV], amb="duplicate JSON keys")
case("disp_unicode_escape_path", ['{"command":"create","path":"\\/memories\\/\\u0061.txt","file_text":"t"}', ROOTV])

# ---------------- deleted and renamed files never come back; more edge rules
case("st_delete_dir_recreate_no_resurrection", [C("/memories/d/a"), C("/memories/d/b"), D("/memories/d"), C("/memories/d/c"), V("/memories/d"), V("/memories/d/a")])
case("st_rename_dir_recreate_old", [C("/memories/d/a", "A"), C("/memories/d/s/b", "B"), R("/memories/d", "/memories/e"), C("/memories/d/x"), V("/memories/d"), V("/memories/e"), V("/memories/e/s/b")])
case("st_versions_then_rename", [C("/memories/f", "v1"), C("/memories/f", "v2"), R("/memories/f", "/memories/g"), V("/memories/g"), C("/memories/f", "new"), V("/memories/f"), S("/memories/g", "v2", "v3"), V("/memories/g")])
case("st_rename_onto_deleted_path", [C("/memories/a", "A"), C("/memories/b", "B"), D("/memories/a"), R("/memories/b", "/memories/a"), V("/memories/a"), ROOTV])
case("st_rename_dir_onto_deleted_dir", [C("/memories/x/1", "one"), C("/memories/y/2", "two"), D("/memories/x"), R("/memories/y", "/memories/x"), V("/memories/x"), V("/memories/x/1")])
case("st_rename_empty_dir_deep", [C("/memories/e/f"), D("/memories/e/f"), R("/memories/e", "/memories/n/m/e"), ROOTV])
case("st_rename_chain_three", [C("/memories/a", "z"), R("/memories/a", "/memories/b"), R("/memories/b", "/memories/c"), R("/memories/c", "/memories/d/e"), ROOTV, V("/memories/d/e")])
case("st_delete_file_keeps_dir_siblings", [C("/memories/d/a"), C("/memories/d/b"), D("/memories/d/a"), V("/memories/d")])
case("st_create_file_over_deleted_dir_child", [C("/memories/d/s/x"), D("/memories/d/s"), C("/memories/d/s", "now a file"), V("/memories/d"), V("/memories/d/s")])
case("st_dir_becomes_file_after_rename", [C("/memories/d/x"), C("/memories/f", "F"), R("/memories/d", "/memories/z"), R("/memories/f", "/memories/d"), ROOTV])
case("st_insert_after_rename_into_dir", [C("/memories/f", "a\n"), R("/memories/f", "/memories/q/f"), I("/memories/q/f", 1, "b"), V("/memories/q/f")])
case("st_many_files_listing", [C("/memories/m/f%03d" % i, "x" * i) for i in range(0, 40)] + [V("/memories/m")])
case("st_listing_hidden_file_in_subdir_of_subdir", [C("/memories/a/b/.c"), C("/memories/a/b/d"), V("/memories/a")])
case("st_hidden_depth1_dir_with_visible_inside", [C("/memories/.git/HEAD"), C("/memories/.git/refs/x"), C("/memories/r"), ROOTV])
case("st_node_modules_nested_in_hidden", [C("/memories/.a/node_modules/x"), V("/memories/.a")])
case("st_node_modules_in_subdir_view", [C("/memories/p/node_modules/x"), C("/memories/p/node_modulesX"), V("/memories/p")])
case("path_space_segment", [C("/memories/ /x", "sp"), ROOTV, V("/memories/ /x")])
case("path_trailing_space_distinct", [C("/memories/a", "1"), C("/memories/a ", "22"), ROOTV])
case("path_tab_in_name", [C("/memories/a\tb", "t"), ROOTV])
case("path_percent_2e_inside_name", [C("/memories/foo%2ebar", "t")])
case("path_percent_in_rename_new", [C("/memories/f"), R("/memories/f", "/memories/%2E%2E%2Fx")])
case("path_percent_in_rename_old", [R("/memories/%5c", "/memories/ok")])
case("path_dot_file_dot", [C("/memories/f", "ff"), D("/memories/f/.")], hand={1: OK("Successfully deleted /memories/f/.")})
case("path_dir_dot_slash_view", [C("/memories/d/x", "1"), V("/memories/d/./")])
case("path_surrogate_pair_escape", ['{"command":"create","path":"/memories/\\ud83d\\ude00","file_text":"e"}', ROOTV])
case("path_upper_unicode_sort", [C("/memories/Ä"), C("/memories/a"), C("/memories/z"), C("/memories/Z"), ROOTV])
case("vr_minus0", [C("/memories/r", FIVE), '{"command":"view","path":"/memories/r","view_range":[2,-0]}'])
case("vr_exponent_notation", [C("/memories/r", FIVE), '{"command":"view","path":"/memories/r","view_range":[2,3e0]}'], amb="3e0 is a JSON number in float notation")
case("vr_second_minus1_start_beyond", [C("/memories/r", FIVE), V("/memories/r", [99, -1])])
case("vr_start_minus1_end_2", [C("/memories/r", FIVE), V("/memories/r", [-1, 2])])
case("vr_trailing_nl_last_only", [C("/memories/r", "a\nb\n"), V("/memories/r", [3, 3])])
case("vr_crlf_range", [C("/memories/r", "a\r\nb\r\nc"), V("/memories/r", [2, 2])])
case("sr_empty_old_newline_file", [C("/memories/s", "\n"), S("/memories/s", "", "x")],
     hand={1: E("No replacement was performed. Multiple occurrences of old_str `` in lines: 1, 2. Please ensure it is unique")})
case("sr_empty_old_one_char", [C("/memories/s", "a"), S("/memories/s", "", "x")])
case("sr_crlf_snippet", [C("/memories/s", "1\r\n2\r\n3\r\n4\r\n5\r\n"), S("/memories/s", "3", "three")])
case("sr_old_str_is_newline_unique", [C("/memories/s", "ab\ncd"), S("/memories/s", "\n", " ")])
case("sr_old_str_is_newline_multi", [C("/memories/s", "a\nb\n"), S("/memories/s", "\n", "")])
case("sr_old_str_trailing_newline_at_eof", [C("/memories/s", "a\nb\n"), S("/memories/s", "b\n", "c"), V("/memories/s")])
case("sr_new_str_contains_old", [C("/memories/s", "x"), S("/memories/s", "x", "xx"), S("/memories/s", "x", "y")])
case("sr_tab_old_str", [C("/memories/s", "a\tb\n"), S("/memories/s", "\t", "    "), V("/memories/s")])
case("sr_nul_in_content", [C("/memories/s", "a\u0000b"), S("/memories/s", "\u0000", "-"), V("/memories/s")])
case("sr_match_at_line_3_of_many", [C("/memories/s", "\n".join(str(i) for i in range(1, 12))), S("/memories/s", "3\n4", "34")])
case("sr_long_new_str_single_line", [C("/memories/s", "a\nb"), S("/memories/s", "b", "B" * 5000)])
case("sr_emoji_overlap_count", [C("/memories/s", "😀😀😀"), S("/memories/s", "😀😀", "x")])
case("ins_text_trailing_crlf_mixed", [C("/memories/i", "a\n"), I("/memories/i", 1, "x\r\n\n"), V("/memories/i")])
case("ins_text_leading_newlines", [C("/memories/i", "a\n"), I("/memories/i", 0, "\n\nx"), V("/memories/i")])
case("ins_minus0", [C("/memories/i", "a"), '{"command":"insert","path":"/memories/i","insert_line":-0,"insert_text":"b"}', V("/memories/i")])
case("ins_line_exponent", [C("/memories/i", "a"), '{"command":"insert","path":"/memories/i","insert_line":1e0,"insert_text":"b"}'], amb="1e0 float notation")
case("ins_nul_text", [C("/memories/i", "a"), I("/memories/i", 1, "\u0000"), V("/memories/i")])
case("ins_into_whitespace_file", [C("/memories/i", "   "), I("/memories/i", 1, "x"), V("/memories/i")])
case("ins_file_without_nl_middle", [C("/memories/i", "a\nb\nc"), I("/memories/i", 2, "X\nY"), V("/memories/i")])
case("ins_on_hidden_file", [C("/memories/.h", "a"), I("/memories/.h", 1, "b"), V("/memories/.h")])
case("del_dir_trailing_slash_echo", [C("/memories/d/x"), D("/memories/d/"), ROOTV], hand={1: OK("Successfully deleted /memories/d/")})
case("del_root_variants_all", [D("/memories"), D("/memories/"), D("/memories/./"), D("/memories/././/"), ROOTV])
case("del_file_in_hidden_dir", [C("/memories/.h/x"), D("/memories/.h/x"), V("/memories/.h")])
case("ren_root_variants", [R("/memories/./", "/memories/x"), R("//memories", "/memories/x"), R("/memories/.", "/memories")])
case("ren_new_root_dot", [C("/memories/f"), R("/memories/f", "/memories/.")], hand={1: E("The destination /memories/. already exists")})
case("ren_sibling_prefix_dir_into", [C("/memories/ab/x"), C("/memories/a/y"), R("/memories/a", "/memories/ab/a"), ROOTV])
case("ren_parent_is_file_deep_and_missing_source", [C("/memories/f"), R("/memories/nope", "/memories/f/x")],
     hand={1: E("The path /memories/nope does not exist")})
case("ren_subdir_of_itself_dest_exists", [C("/memories/a/b/c"), R("/memories/a", "/memories/a/b")],
     hand={1: E("The destination /memories/a/b already exists")})
case("ren_dir_into_child_of_file_inside_itself", [C("/memories/a/f"), R("/memories/a", "/memories/a/f/g")])
case("ren_file_to_dir_trailing_double_slash", [C("/memories/f", "1"), R("/memories/f", "/memories/n//m//"), V("/memories/n")])
case("ren_into_hidden_then_view", [C("/memories/f", "1"), R("/memories/f", "/memories/.arch/f"), ROOTV, V("/memories/.arch")])
case("ren_node_modules_out", [C("/memories/node_modules/x", "1"), R("/memories/node_modules", "/memories/nm"), ROOTV])
case("disp_command_missing_with_other_fields", [{"path": "/memories/x", "file_text": "y"}, ROOTV])
case("disp_each_unknown_with_valid_shape", [{"command": "undo", "path": "/memories"}, {"command": "str-replace", "path": "/memories"}, {"command": "Create", "path": "/memories/x", "file_text": "t"}, ROOTV])
case("disp_file_text_bool", [{"command": "create", "path": "/memories/x", "file_text": True}])
case("disp_insert_text_null", [C("/memories/i", "a"), {"command": "insert", "path": "/memories/i", "insert_line": 0, "insert_text": None}])
case("disp_old_path_null", [{"command": "rename", "old_path": None, "new_path": "/memories/x"}])
case("disp_view_path_object", [{"command": "view", "path": {"p": "/memories"}}])
case("disp_param_before_path_rename", [{"command": "rename", "old_path": "/bad"}],
     amb="order of parameter check vs path check")

# ---------------- integers beyond 64 bits (JSON integers; Python semantics per C11/C16)
_B = "99999999999999999999"
_r = lambda vr: '{"command":"view","path":"/memories/r","view_range":%s}' % vr
case("big_vr_end", [C("/memories/r", FIVE), _r("[2,%s]" % _B)])
case("big_vr_start", [C("/memories/r", FIVE), _r("[%s,-1]" % _B)])
case("big_vr_neg_start", [C("/memories/r", FIVE), _r("[-%s,2]" % _B)])
case("big_vr_neg_end", [C("/memories/r", FIVE), _r("[2,-%s]" % _B)])
case("big_vr_int64_min_end", [C("/memories/r", FIVE), _r("[2,-9223372036854775808]")])
case("big_vr_int64_max_start", [C("/memories/r", FIVE), _r("[9223372036854775807,-1]")])
case("big_ins_line", [C("/memories/r", FIVE), '{"command":"insert","path":"/memories/r","insert_line":%s,"insert_text":"b"}' % _B])
case("big_ins_line_u64max_plus1", [C("/memories/r", FIVE), '{"command":"insert","path":"/memories/r","insert_line":18446744073709551616,"insert_text":"b"}'])
case("big_ins_line_neg", [C("/memories/r", FIVE), '{"command":"insert","path":"/memories/r","insert_line":-%s,"insert_text":"b"}' % _B])

# ---------------- names over 255 bytes and keys over 4096 bytes (docs/memtool.md, beyond the
# contract: such a file could not be shown by the mount); sizes after edits
case("path_segment_256", [C("/memories/" + "L" * 256, "x"), ROOTV])
case("path_segment_128_2byte_chars", [C("/memories/" + "é" * 128, "x")])
case("path_key_over_4096", [C("/memories" + "/ddddddddd" * 409 + "/eeeeee", "x")])
case("ren_to_long_segment", [C("/memories/a", "x"), R("/memories/a", "/memories/" + "L" * 300), ROOTV])
case("size_after_overwrite", [C("/memories/f", "aaaa"), C("/memories/f", "b"), ROOTV])
case("size_after_shrink_replace", [C("/memories/f", "x" * 2000), S("/memories/f", "x" * 1990, ""), ROOTV])
case("list_after_delete_depth2", [C("/memories/a/b/c"), C("/memories/a/d"), D("/memories/a/b/c"), ROOTV])
