// memtool against a real temp-file Store: every case of the shipped and the
// extra vector files byte-exactly, then malformed and hostile input.
#include "memtool/memtool.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "grainstore/path.h"
#include "test_store.h"

namespace memtool {
namespace {

using nlohmann::json;

json LoadVectors(const char* file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return json::parse(buf.str(), nullptr, false);
}

// Runs every case of a vector file, each in a fresh namespace; returns the
// number of steps checked. A step that RejectedWithoutStore answers must get
// the same answer there; `rejected` counts them.
int RunVectorFile(const char* file, int* rejected = nullptr) {
  const json cases = LoadVectors(file);
  EXPECT_TRUE(cases.is_array()) << file;
  if (!cases.is_array()) return 0;
  TempStore temp;
  if (temp.store() == nullptr) return 0;
  int steps = 0;
  int index = 0;
  for (const json& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE("case " + name);
    MemoryTool tool(temp.store(), temp.Ns("case" + std::to_string(index++)));
    int step_no = 0;
    for (const json& step : c.at("steps")) {
      SCOPED_TRACE("step " + std::to_string(step_no++));
      const std::string input = step.at("input").dump();
      const ToolResult result = tool.Execute(input);
      const std::string& expected = step.at("output").get_ref<const std::string&>();
      EXPECT_EQ(result.content, expected) << "input: " << input.substr(0, 300);
      EXPECT_EQ(result.is_error, step.at("is_error").get<bool>())
          << "input: " << input.substr(0, 300);
      if (const std::optional<ToolResult> early = RejectedWithoutStore(input)) {
        EXPECT_EQ(early->content, expected) << "input: " << input.substr(0, 300);
        EXPECT_TRUE(early->is_error);
        if (rejected != nullptr) ++*rejected;
      }
      if (result.is_error) {
        EXPECT_EQ("Error: " + result.message, result.content);
      } else {
        EXPECT_TRUE(result.message.empty());
      }
      ++steps;
    }
  }
  return steps;
}

TEST(VectorsTest, ShippedVectorsPass) { EXPECT_GT(RunVectorFile(AREEV_VECTORS_FILE), 200); }

TEST(VectorsTest, ExtraVectorsPass) { EXPECT_GT(RunVectorFile(AREEV_EXTRA_VECTORS_FILE), 200); }

// The input errors answered without a store are Execute's, for every step of
// both files that has one (and there are many: malformed JSON, missing and
// mistyped parameters, invalid paths).
TEST(VectorsTest, InputRejectedWithoutAStoreGetsExecutesAnswer) {
  int rejected = 0;
  RunVectorFile(AREEV_VECTORS_FILE, &rejected);
  RunVectorFile(AREEV_EXTRA_VECTORS_FILE, &rejected);
  EXPECT_GT(rejected, 50);
}

// A well-formed command goes on to the store, whatever the store will say.
TEST(RejectedWithoutStoreTest, AWellFormedCommandIsLeftToTheStore) {
  for (const char* command : {
           R"({"command":"view","path":"/memories"})",
           R"({"command":"view","path":"/memories/missing.md","view_range":[1,2]})",
           R"({"command":"create","path":"/memories/a.md","file_text":""})",
           R"({"command":"str_replace","path":"/memories/a.md","old_str":"x"})",
           R"({"command":"insert","path":"/memories/a.md","insert_line":-5,"insert_text":"x"})",
           R"({"command":"delete","path":"/memories"})",
           R"({"command":"rename","old_path":"/memories/a","new_path":"/memories/b"})",
       }) {
    EXPECT_FALSE(RejectedWithoutStore(command).has_value()) << command;
  }
  const std::optional<ToolResult> rejected =
      RejectedWithoutStore(R"({"command":"rename","old_path":"/memories/a","new_path":"/x"})");
  ASSERT_TRUE(rejected.has_value());
  EXPECT_EQ(rejected->content, "Error: Path must start with /memories, got: /x");
}

TEST_F(MemoryToolTest, MalformedInputIsAnError) {
  struct Case {
    std::string input;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "Input is not valid JSON"},
      {"{", "Input is not valid JSON"},
      {"{\"command\": \"view\", \"path\": \"/memories\"", "Input is not valid JSON"},
      {"{\"command\": \"view\"} trailing", "Input is not valid JSON"},
      {"{'command': 'view'}", "Input is not valid JSON"},
      {"{\"command\": \"view\", \"path\": \"/memories/\\ud800\"}", "Input is not valid JSON"},
      {"{\"n\": 1e999}", "Parameter `command` is required"},  // JSON sets no range
      {"{\"n\": 01}", "Input is not valid JSON"},
      {"null", "Input must be a JSON object"},
      {"[]", "Input must be a JSON object"},
      {"[{\"command\": \"view\", \"path\": \"/memories\"}]", "Input must be a JSON object"},
      {"\"view\"", "Input must be a JSON object"},
      {"42", "Input must be a JSON object"},
      {"{\"command\": \"view\", \"path\": \"/memories/\xff\"}", "Input is not valid UTF-8"},
      {"{\"command\": \"create\", \"path\": \"/memories/a\", \"file_text\": \"\xc3\x28\"}",
       "Input is not valid UTF-8"},
      {"{\"command\": \"view\", \"path\": \"/memories/\xed\xa0\x80\"}", "Input is not valid UTF-8"},
      {"{\"command\": \"view\", \"path\": \"/memories/\xc0\xaf\"}", "Input is not valid UTF-8"},
      {std::string(100000, '['), "Input is not valid JSON"},
      // A NUL ends nothing: what follows it is still input.
      {std::string("{\"command\": \"create\", \"path\": \"/memories/n.md\", \"file_text\": \"a\"}"
                   "\0garbage", 73),
       "Input is not valid JSON"},
      {std::string("{\"command\": \"create\", \"path\": \"/memories/n.md\", \"file_text\": \"a\"}\0",
                   66),
       "Input is not valid JSON"},
  };
  for (const Case& c : cases) {
    const ToolResult result = tool_.Execute(c.input);
    EXPECT_TRUE(result.is_error) << c.input.substr(0, 80);
    EXPECT_EQ(result.message, c.message) << c.input.substr(0, 80);
    EXPECT_EQ(result.content, "Error: " + c.message);
  }
  EXPECT_EQ(ViewRoot(), kEmptyRoot);
}

TEST_F(MemoryToolTest, DeeplyNestedJsonDoesNotCrash) {
  std::string nested = "{\"command\": \"view\", \"path\": \"/memories\", \"x\": ";
  for (int i = 0; i < 100000; ++i) nested += "[";
  for (int i = 0; i < 100000; ++i) nested += "]";
  nested += "}";
  const ToolResult result = tool_.Execute(nested);
  // Unknown members are ignored; the command runs.
  EXPECT_FALSE(result.is_error) << result.content.substr(0, 200);
  EXPECT_EQ(result.content, kEmptyRoot);
}

TEST_F(MemoryToolTest, DeepPathIsRejectedWithoutWriting) {
  std::string deep = "/memories";
  for (int i = 0; i < 5000; ++i) deep += "/d";
  const ToolResult result =
      Run({{"command", "create"}, {"path", deep + "/f.txt"}, {"file_text", "x"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "Path " + deep + "/f.txt is too long");
  EXPECT_EQ(ViewRoot(), kEmptyRoot);
}

// The store's length limits are not the contract's: a path past them cannot
// exist, so reads, edits, deletes and a rename from it answer as for any
// missing path, and only a write that would make it is refused as too long.
TEST_F(MemoryToolTest, AnOverLongPathIsMissingForEverythingButAWrite) {
  const std::string name = "/memories/" + std::string(256, 'n');
  std::string deep = "/memories";
  while (deep.size() <= grainstore::kMaxKeyBytes) deep += "/dir";
  ASSERT_FALSE(Run({{"command", "create"}, {"path", "/memories/f.txt"}, {"file_text", "x\n"}})
                   .is_error);
  for (const std::string& p : {name, deep}) {
    EXPECT_EQ(Run({{"command", "view"}, {"path", p}}).content,
              "Error: The path " + p + " does not exist. Please provide a valid path.");
    EXPECT_EQ(Run({{"command", "str_replace"}, {"path", p}, {"old_str", "x"}}).content,
              "Error: The path " + p + " does not exist. Please provide a valid path.");
    EXPECT_EQ(Run({{"command", "insert"}, {"path", p}, {"insert_line", 0}, {"insert_text", "y"}})
                  .content,
              "Error: The path " + p + " does not exist");
    EXPECT_EQ(Run({{"command", "delete"}, {"path", p}}).content,
              "Error: The path " + p + " does not exist");
    EXPECT_EQ(Run({{"command", "rename"}, {"old_path", p}, {"new_path", "/memories/g.txt"}}).content,
              "Error: The path " + p + " does not exist");
    // C19's order still holds: a taken destination comes before the missing source.
    EXPECT_EQ(Run({{"command", "rename"}, {"old_path", p}, {"new_path", "/memories/f.txt"}}).content,
              "Error: The destination /memories/f.txt already exists");
    EXPECT_EQ(Run({{"command", "rename"}, {"old_path", "/memories/none"}, {"new_path", p}}).content,
              "Error: The path /memories/none does not exist");
    EXPECT_EQ(Run({{"command", "rename"}, {"old_path", "/memories/f.txt"}, {"new_path", p}}).content,
              "Error: Path " + p + " is too long");
    EXPECT_EQ(Run({{"command", "create"}, {"path", p}, {"file_text", "y"}}).content,
              "Error: Path " + p + " is too long");
    // ".." after the limit is still an escape, not a missing path.
    EXPECT_EQ(Run({{"command", "view"}, {"path", p + "/.."}}).content,
              "Error: Path " + p + "/.. would escape /memories directory");
  }
  EXPECT_EQ(ViewRoot(), "Here're the files and directories up to 2 levels deep in /memories, "
                        "excluding hidden items and node_modules:\n4K\t/memories\n2B\t/memories/f.txt");
}

// Only a write the contract would let through meets the length limits: its
// own errors, a parent that is a file (C12, C19 step 5) or a move into
// itself (C19 step 4), come first.
TEST_F(MemoryToolTest, TheContractsErrorsComeBeforeTheLengthLimits) {
  const std::string n256(256, 'n');
  ASSERT_FALSE(Run({{"command", "create"}, {"path", "/memories/f.txt"}, {"file_text", "x\n"}})
                   .is_error);
  ASSERT_FALSE(Run({{"command", "create"}, {"path", "/memories/a/x"}, {"file_text", "x\n"}})
                   .is_error);
  for (const std::string& p : {"/memories/f.txt/" + n256, "/memories/f.txt/b/" + n256 + "/c",
                               "/memories/a/x/" + n256}) {
    EXPECT_EQ(Run({{"command", "create"}, {"path", p}, {"file_text", "y"}}).content,
              "Error: A parent of " + p + " is a file, not a directory");
    EXPECT_EQ(Run({{"command", "rename"}, {"old_path", "/memories/a"}, {"new_path", p}}).content,
              p.starts_with("/memories/a/")
                  ? "Error: Cannot rename /memories/a to a subdirectory of itself, " + p
                  : "Error: A parent of " + p + " is a file, not a directory");
  }
  for (const std::string& p : {"/memories/a/" + n256, "/memories/a/b/" + n256}) {
    EXPECT_EQ(Run({{"command", "rename"}, {"old_path", "/memories/a"}, {"new_path", p}}).content,
              "Error: Cannot rename /memories/a to a subdirectory of itself, " + p);
  }
  EXPECT_EQ(Run({{"command", "rename"}, {"old_path", "/memories/a"},
                 {"new_path", "/memories/q/" + n256}}).content,
            "Error: Path /memories/q/" + n256 + " is too long");
  EXPECT_EQ(Run({{"command", "view"}, {"path", "/memories/a/x"}}).content,
            "Here's the content of /memories/a/x with line numbers:\n     1\tx\n     2\t");
}

// Path rules apply to each path argument before anything after it is read
// (section 11.3), as in the SDKs' handlers; a path that is absent is still a
// missing parameter (C21).
TEST_F(MemoryToolTest, APathIsValidatedBeforeTheParametersAfterIt) {
  const std::string outside = "Path must start with /memories, got: /outside";
  const std::string escape = "Path /memories/../x would escape /memories directory";
  EXPECT_EQ(tool_.Execute(R"({"command": "create", "path": "/outside"})").message, outside);
  EXPECT_EQ(tool_.Execute(R"({"command": "str_replace", "path": "/outside", "new_str": 7})").message,
            outside);
  EXPECT_EQ(tool_.Execute(R"({"command": "insert", "path": "/memories/../x", "insert_line": "1"})")
                .message,
            escape);
  EXPECT_EQ(tool_.Execute(R"({"command": "rename", "old_path": "/outside", "new_path": 5})").message,
            outside);
  EXPECT_EQ(tool_.Execute(R"({"command": "rename", "old_path": "/memories/a", "new_path": 5})")
                .message,
            "Parameter `new_path` is required for command: rename");
  EXPECT_EQ(tool_.Execute(R"({"command": "rename", "old_path": "/memories/a", )"
                          R"("new_path": "/memories/../x"})")
                .message,
            escape);
  EXPECT_EQ(tool_.Execute(R"({"command": "create", "file_text": "x"})").message,
            "Parameter `path` is required for command: create");
  EXPECT_EQ(tool_.Execute(R"({"command": "create", "path": "/memories/a"})").message,
            "Parameter `file_text` is required for command: create");
  EXPECT_EQ(ViewRoot(), kEmptyRoot);
}

// JSON integers wider than 64 bits are still integers (C21): insert_line's
// range error echoes them as written (C16) and view_range clamps them (C11).
// Other number forms stay what they were: 1.0 is not an integer.
TEST_F(MemoryToolTest, IntegersWiderThanSixtyFourBitsStayIntegers) {
  ASSERT_FALSE(Run({{"command", "create"}, {"path", "/memories/f.txt"}, {"file_text", "a\nb\n"}})
                   .is_error);
  // Past a double's range too, which nlohmann::json alone refuses.
  const std::string huge = "2" + std::string(308, '0');
  for (const std::string& line :
       std::vector<std::string>{"99999999999999999999", "-9223372036854775809",
                                "18446744073709551616", "-1", "100000000000000000000000000",
                                huge, "-" + huge}) {
    const ToolResult r = tool_.Execute(R"({"command": "insert", "path": "/memories/f.txt", )"
                                       R"("insert_line": )" + line + R"(, "insert_text": "x"})");
    EXPECT_TRUE(r.is_error) << line;
    EXPECT_EQ(r.message, "Invalid `insert_line` parameter: " + line +
                             ". It should be within the range of lines of the file: [0, 2]")
        << line;
  }
  for (const std::string& line :
       std::vector<std::string>{"1.0", "1e0", "99999999999999999999.0", "1e20", "1e400",
                                "-1.5e99999999999999999999", huge + ".0", "1e-400"}) {
    const ToolResult r = tool_.Execute(R"({"command": "insert", "path": "/memories/f.txt", )"
                                       R"("insert_line": )" + line + R"(, "insert_text": "x"})");
    EXPECT_EQ(r.message, "Parameter `insert_line` is required for command: insert") << line;
  }
  const std::string header = "Here's the content of /memories/f.txt with line numbers:\n";
  EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt", )"
                          R"("view_range": [2, 99999999999999999999]})")
                .content,
            header + "     2\tb\n     3\t");
  EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt", )"
                          R"("view_range": [-99999999999999999999, 1]})")
                .content,
            header + "     1\ta");
  EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt", "view_range": [2, )" +
                          huge + "]}")
                .content,
            header + "     2\tb\n     3\t");
  // A number past a double's range that is no integer makes view_range
  // something other than two integers: ignored (C11), as is such a number
  // in a member no command reads.
  EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt", "x": -1e400, )"
                          R"("view_range": [1, 1e400]})")
                .content,
            header + "     1\ta\n     2\tb\n     3\t");
  EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt", "y": ")" + huge +
                          R"(", "x": )" + huge + R"(, "view_range": [1, 1]})")
                .content,
            header + "     1\ta");
  // What is not JSON stays refused.
  for (const std::string& bad : std::vector<std::string>{"1e400.5", "--1e400", huge + "e",
                                                         "0" + huge}) {
    EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt", "x": )" + bad + "}")
                  .message,
              "Input is not valid JSON")
        << bad;
  }
  // A repeated member: the last one counts, digits and all.
  EXPECT_EQ(tool_.Execute(R"({"command": "insert", "path": "/memories/f.txt", )"
                          R"("insert_line": 99999999999999999999, "insert_line": 7, )"
                          R"("insert_text": "x"})")
                .message,
            "Invalid `insert_line` parameter: 7. It should be within the range of lines of the "
            "file: [0, 2]");
  EXPECT_EQ(tool_.Execute(R"({"command": "insert", "path": "/memories/f.txt", )"
                          R"("insert_line": 7, "insert_line": 99999999999999999999, )"
                          R"("insert_text": "x"})")
                .message,
            "Invalid `insert_line` parameter: 99999999999999999999. It should be within the range "
            "of lines of the file: [0, 2]");
  // A wide integer nested deeper, or under another name, changes nothing.
  EXPECT_EQ(tool_.Execute(R"({"command": "insert", "path": "/memories/f.txt", "insert_line": 0, )"
                          R"("x": [99999999999999999999], "y": 99999999999999999999, )"
                          R"("insert_text": "top"})")
                .content,
            "The file /memories/f.txt has been edited.");
  EXPECT_EQ(tool_.Execute(R"({"command": "view", "path": "/memories/f.txt"})").content,
            header + "     1\ttop\n     2\ta\n     3\tb\n     4\t");
}

TEST_F(MemoryToolTest, InputAboveLimitIsRejectedUnparsed) {
  std::string huge(kMaxInputBytes + 1, ' ');
  const ToolResult result = tool_.Execute(huge);
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "Input is too large (limit 268435456 bytes)");
}

// Issue: a file of newlines searched for "" or "\n" answered with one line
// number per byte, a 1 GB message for a 100 MiB file. The contract lets a
// backend cap the list for an empty old_str only; any other lists every match
// below kMaxListedBytes.
TEST_F(MemoryToolTest, AnAmbiguityMessageListsAtMostItsCapAndCountsTheRest) {
  const std::size_t extra = 7;
  const json create = {{"command", "create"},
                       {"path", "/memories/n.txt"},
                       {"file_text", std::string(internal::kMaxListedMatches + extra - 1, '\n')}};
  ASSERT_FALSE(tool_.Execute(create.dump()).is_error);
  std::string lines;
  for (std::size_t i = 1; i <= internal::kMaxListedMatches; ++i) {
    lines += (i == 1 ? "" : ", ") + std::to_string(i);
  }
  // "" matches at every one of the size + 1 positions.
  const ToolResult empty = tool_.Execute(
      R"({"command":"str_replace","path":"/memories/n.txt","old_str":"","new_str":"x"})");
  EXPECT_EQ(empty.message, "No replacement was performed. Multiple occurrences of old_str `` in "
                           "lines: " + lines + ", and " + std::to_string(extra) +
                           " more. Please ensure it is unique");
  std::string all_lines = lines;
  for (std::size_t i = internal::kMaxListedMatches + 1;
       i < internal::kMaxListedMatches + extra; ++i) {
    all_lines += ", " + std::to_string(i);
  }
  const ToolResult newline = tool_.Execute(
      R"({"command":"str_replace","path":"/memories/n.txt","old_str":"\n","new_str":"x"})");
  EXPECT_EQ(newline.message, "No replacement was performed. Multiple occurrences of old_str `\n` "
                             "in lines: " + all_lines + ". Please ensure it is unique");
  // At the cap, nothing is left out.
  const json exact = {{"command", "create"},
                      {"path", "/memories/e.txt"},
                      {"file_text", std::string(internal::kMaxListedMatches - 1, '\n')}};
  ASSERT_FALSE(tool_.Execute(exact.dump()).is_error);
  const ToolResult all = tool_.Execute(
      R"({"command":"str_replace","path":"/memories/e.txt","old_str":"","new_str":"x"})");
  EXPECT_EQ(all.message, "No replacement was performed. Multiple occurrences of old_str `` "
                         "in lines: " + lines + ". Please ensure it is unique");
}

TEST_F(MemoryToolTest, AnAmbiguityMessageListsMatchesUntilItsByteCapAndCountsTheRest) {
  // One line of "a": every match is line 1, "1" then ", 1" each, so the list
  // reaches kMaxListedBytes after `listed` matches.
  const std::size_t listed = (internal::kMaxListedBytes - 1) / 3 + 1;
  const std::size_t extra = 5;
  const json create = {{"command", "create"},
                       {"path", "/memories/a.txt"},
                       {"file_text", std::string(listed + extra, 'a')}};
  ASSERT_FALSE(tool_.Execute(create.dump()).is_error);
  const ToolResult result = tool_.Execute(
      R"({"command":"str_replace","path":"/memories/a.txt","old_str":"a","new_str":"b"})");
  std::string expected = "No replacement was performed. Multiple occurrences of old_str `a` in "
                         "lines: 1";
  for (std::size_t i = 1; i < listed; ++i) expected += ", 1";
  expected += ", and " + std::to_string(extra) + " more. Please ensure it is unique";
  EXPECT_EQ(result.message.size(), expected.size());
  EXPECT_TRUE(result.message == expected);  // not printed: 64 MiB
}

// Issue: the list of a needle that overlaps itself (a line repeated, a run of
// one character) found each match with a memmem from the byte after the
// last, which prepares the needle again each time: 1 MiB of "a" searched for
// 10,000 of them took 20 s, holding the store's write lock. Every match is
// still listed, overlapping ones too.
TEST_F(MemoryToolTest, AnAmbiguityMessageListsEveryOverlappingMatchOfALongNeedle) {
  // Line k (1-based) holds "ab" k times: "abab" matches k - 1 times in it.
  std::string text;
  std::string expected_lines;
  for (int k = 1; k <= 40; ++k) {
    for (int i = 0; i < k; ++i) text += "ab";
    text += "\n";
    for (int i = 0; i + 1 < k; ++i) {
      if (!expected_lines.empty()) expected_lines += ", ";
      expected_lines += std::to_string(k);
    }
  }
  const json small = {{"command", "create"}, {"path", "/memories/ab.txt"}, {"file_text", text}};
  ASSERT_FALSE(tool_.Execute(small.dump()).is_error);
  EXPECT_EQ(tool_.Execute(R"({"command":"str_replace","path":"/memories/ab.txt",)"
                          R"("old_str":"abab","new_str":"x"})").message,
            "No replacement was performed. Multiple occurrences of old_str `abab` in lines: " +
                expected_lines + ". Please ensure it is unique");
  // 1 MiB of "a" on one line, searched for 10,000 of them: a match at every
  // offset up to the last 9,999.
  const std::size_t size = std::size_t{1} << 20;
  const std::size_t run = 10000;
  const json big = {{"command", "create"}, {"path", "/memories/a.txt"},
                    {"file_text", std::string(size, 'a')}};
  ASSERT_FALSE(tool_.Execute(big.dump()).is_error);
  const json edit = {{"command", "str_replace"}, {"path", "/memories/a.txt"},
                     {"old_str", std::string(run, 'a')}, {"new_str", "b"}};
  const std::string message = tool_.Execute(edit.dump()).message;
  std::string lines = "1";
  for (std::size_t i = 1; i < size - run + 1; ++i) lines += ", 1";
  EXPECT_EQ(message.size(), 63 + run + 12 + lines.size() + 28);
  EXPECT_TRUE(message.find("` in lines: " + lines + ". Please ensure it is unique") !=
              std::string::npos);
}

TEST(ToJsonLineTest, Format) {
  ToolResult ok;
  ok.content = "a\"b\\c\n\t\x01 \xc3\xa9";
  EXPECT_EQ(ToJsonLine(ok),
            "{\"content\": \"a\\\"b\\\\c\\n\\t\\u0001 \xc3\xa9\", \"is_error\": false}");
  ToolResult err;
  err.content = "Error: x";
  err.is_error = true;
  EXPECT_EQ(ToJsonLine(err), "{\"content\": \"Error: x\", \"is_error\": true}");
  ToolResult bad;
  bad.content = "x\xff";
  EXPECT_EQ(ToJsonLine(bad), "{\"content\": \"x\xef\xbf\xbd\", \"is_error\": false}");
  ToolResult nul;
  nul.content = std::string("a\0b", 3);
  EXPECT_EQ(ToJsonLine(nul), "{\"content\": \"a\\u0000b\", \"is_error\": false}");
}

}  // namespace
}  // namespace memtool
