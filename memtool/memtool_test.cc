// memtool against a real temp-file Store: every case of the shipped and the
// extra vector files byte-exactly, then hostile input and store-level effects.
#include "memtool/memtool.h"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "grainstore/options.h"
#include "grainstore/store.h"

namespace memtool {
namespace {

using nlohmann::json;

class TempStore {
 public:
  TempStore() {
    char tmpl[] = "/tmp/memtool_test_XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto opened = grainstore::Store::Open(dir_ + "/store.db");
    if (!opened.has_value()) {
      ADD_FAILURE() << "Store::Open: " << opened.error().message();
      return;
    }
    store_ = std::move(opened).value();
  }
  ~TempStore() {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  grainstore::Store* store() { return store_.get(); }
  grainstore::NsId Ns(const std::string& name) {
    auto ns = store_->Namespace(name);
    EXPECT_TRUE(ns.has_value()) << ns.error().message();
    return ns.has_value() ? *ns : 0;
  }

 private:
  std::string dir_;
  std::unique_ptr<grainstore::Store> store_;
};

json LoadVectors(const char* file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return json::parse(buf.str(), nullptr, false);
}

// Runs every case of a vector file, each in a fresh namespace; returns the
// number of steps checked.
int RunVectorFile(const char* file) {
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

class MemoryToolTest : public ::testing::Test {
 protected:
  MemoryToolTest() : ns_(temp_.Ns("t")), tool_(temp_.store(), ns_) {}

  ToolResult Run(const json& command) { return tool_.Execute(command.dump()); }
  std::string ViewRoot() { return Run({{"command", "view"}, {"path", "/memories"}}).content; }

  TempStore temp_;
  grainstore::NsId ns_;
  MemoryTool tool_;
};

constexpr char kEmptyRoot[] =
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items "
    "and node_modules:\n4K\t/memories";

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
      {"{\"n\": 1e999}", "Input is not valid JSON"},
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

TEST_F(MemoryToolTest, InputAboveLimitIsRejectedUnparsed) {
  std::string huge(kMaxInputBytes + 1, ' ');
  const ToolResult result = tool_.Execute(huge);
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "Input is too large (limit 268435456 bytes)");
}

// Builds {"command": ..., <prefix members>, "<member>": "<filler x n>"} without
// a JSON library pass over the (large) filler.
std::string CommandWithFiller(const std::string& members, const char* filler_member,
                              std::size_t n) {
  std::string cmd = "{" + members + ", \"" + filler_member + "\": \"";
  cmd.append(n, 'y');
  cmd.append("\"}");
  return cmd;
}

TEST_F(MemoryToolTest, BodyAboveStoreLimitLeavesNothingWritten) {
  const std::size_t limit = grainstore::Limits::kMaxBodyBytes;
  const std::string message = " would exceed the size limit of " + std::to_string(limit) + " bytes";
  ToolResult result = tool_.Execute(CommandWithFiller(
      R"("command": "create", "path": "/memories/big.txt")", "file_text", limit + 1));
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "File /memories/big.txt" + message);
  EXPECT_EQ(ViewRoot(), kEmptyRoot);

  // Growing a file past the limit through str_replace or insert is rejected
  // inside the edit transaction; the file keeps its old body and history.
  const std::string start = "A" + std::string(limit / 2, 'z');
  ASSERT_TRUE(temp_.store()->PutFile(ns_, "/memories/h.txt", start).has_value());
  result = tool_.Execute(
      CommandWithFiller(R"("command": "str_replace", "path": "/memories/h.txt", "old_str": "A")",
                        "new_str", limit / 2 + 1));
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "File /memories/h.txt" + message);
  result = tool_.Execute(
      CommandWithFiller(R"("command": "insert", "path": "/memories/h.txt", "insert_line": 0)",
                        "insert_text", limit / 2));
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "File /memories/h.txt" + message);
  auto body = temp_.store()->ReadFile(ns_, "/memories/h.txt");
  ASSERT_TRUE(body.has_value());
  EXPECT_TRUE(*body == start);
  auto history = temp_.store()->History(ns_, "/memories/h.txt");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->size(), 1u);
}

TEST_F(MemoryToolTest, NulBytesInBodiesAreStoredVerbatim) {
  const std::string text("a\0b\n\0", 5);
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/n.bin"}, {"file_text", text}}).is_error);
  auto body = temp_.store()->ReadFile(ns_, "/memories/n.bin");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(*body, text);
  const ToolResult view = Run({{"command", "view"}, {"path", "/memories/n.bin"}});
  const std::string nul(1, '\0');
  EXPECT_EQ(view.content, "Here's the content of /memories/n.bin with line numbers:\n     1\ta" +
                              nul + "b\n     2\t" + nul);
}

TEST_F(MemoryToolTest, CreateOnExistingFileAppendsAVersion) {
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/v.txt"}, {"file_text", "one"}}).is_error);
  const ToolResult again =
      Run({{"command", "create"}, {"path", "/memories/v.txt"}, {"file_text", "two"}});
  EXPECT_EQ(again.content, "File created successfully at: /memories/v.txt");
  auto history = temp_.store()->History(ns_, "/memories/v.txt");
  ASSERT_TRUE(history.has_value()) << history.error().message();
  ASSERT_EQ(history->size(), 2u);
  auto v1 = temp_.store()->ReadVersion(ns_, "/memories/v.txt", "1");
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(*v1, "one");
}

TEST_F(MemoryToolTest, RejectedEditsWriteNoVersion) {
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/e.txt"}, {"file_text", "aa\n"}}).is_error);
  EXPECT_TRUE(Run({{"command", "str_replace"},
                   {"path", "/memories/e.txt"},
                   {"old_str", "a"},
                   {"new_str", "b"}})
                  .is_error);
  EXPECT_TRUE(Run({{"command", "str_replace"},
                   {"path", "/memories/e.txt"},
                   {"old_str", "z"},
                   {"new_str", "b"}})
                  .is_error);
  EXPECT_TRUE(Run({{"command", "insert"},
                   {"path", "/memories/e.txt"},
                   {"insert_line", 9},
                   {"insert_text", "b"}})
                  .is_error);
  auto history = temp_.store()->History(ns_, "/memories/e.txt");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->size(), 1u);
  EXPECT_FALSE(Run({{"command", "str_replace"},
                    {"path", "/memories/e.txt"},
                    {"old_str", "aa"},
                    {"new_str", "b"}})
                   .is_error);
  history = temp_.store()->History(ns_, "/memories/e.txt");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->size(), 2u);
}

TEST_F(MemoryToolTest, RenameKeepsHistoryAndDeleteTombstones) {
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/a.txt"}, {"file_text", "1"}}).is_error);
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/a.txt"}, {"file_text", "2"}}).is_error);
  ASSERT_FALSE(Run({{"command", "rename"},
                    {"old_path", "/memories/a.txt"},
                    {"new_path", "/memories/d/b.txt"}})
                   .is_error);
  auto v1 = temp_.store()->ReadVersion(ns_, "/memories/d/b.txt", "1");
  ASSERT_TRUE(v1.has_value()) << v1.error().message();
  EXPECT_EQ(*v1, "1");
  ASSERT_FALSE(Run({{"command", "delete"}, {"path", "/memories/d"}}).is_error);
  EXPECT_FALSE(temp_.store()->StatKey(ns_, "/memories/d").has_value());
  auto history = temp_.store()->History(ns_, "/memories/d/b.txt");
  ASSERT_TRUE(history.has_value()) << history.error().message();
  EXPECT_GE(history->size(), 2u);
}

TEST_F(MemoryToolTest, SymlinksAreInvisible) {
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/f.txt"}, {"file_text", "f"}}).is_error);
  auto root = temp_.store()->RootId(ns_);
  ASSERT_TRUE(root.has_value());
  grainstore::NewNode spec;
  spec.kind = grainstore::NodeKind::kSymlink;
  spec.symlink_target = "f.txt";
  ASSERT_TRUE(temp_.store()->CreateNode(*root, "link", spec).has_value());
  EXPECT_EQ(ViewRoot(), std::string(kEmptyRoot) + "\n1B\t/memories/f.txt");
  const std::string not_exist =
      "The path /memories/link does not exist. Please provide a valid path.";
  EXPECT_EQ(Run({{"command", "view"}, {"path", "/memories/link"}}).message, not_exist);
  EXPECT_EQ(Run({{"command", "str_replace"}, {"path", "/memories/link"}, {"old_str", "f"}}).message,
            not_exist);
  EXPECT_EQ(Run({{"command", "delete"}, {"path", "/memories/link"}}).message,
            "The path /memories/link does not exist");
  EXPECT_EQ(
      Run({{"command", "rename"}, {"old_path", "/memories/link"}, {"new_path", "/memories/x"}})
          .message,
      "The path /memories/link does not exist");
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

// Timing bounds are only meaningful in optimised builds without sanitizers.
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
constexpr bool kTimingBuild = true;
#else
constexpr bool kTimingBuild = false;
#endif

double ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Best of five rounds of the mean thread CPU time per call, after one warm-up
// call: the machine is shared, so CPU time and the minimum are the stable
// statistics.
double MicrosPerCall(int iterations, const std::function<void()>& fn) {
  fn();
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    const double start = ThreadCpuMicros();
    for (int i = 0; i < iterations; ++i) fn();
    best = std::min(best, (ThreadCpuMicros() - start) / iterations);
  }
  return best;
}

TEST_F(MemoryToolTest, ViewIsCheapBeyondTheStoreRead) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "line " + std::to_string(i) + " of a typical memory file\n";
  ASSERT_FALSE(
      Run({{"command", "create"}, {"path", "/memories/p.txt"}, {"file_text", text}}).is_error);
  const std::string cmd = R"({"command": "view", "path": "/memories/p.txt"})";
  const double read_us = MicrosPerCall(500, [&] {
    auto body = temp_.store()->ReadFile(ns_, "/memories/p.txt");
    ASSERT_TRUE(body.has_value());
  });
  const double view_us = MicrosPerCall(500, [&] { ASSERT_FALSE(tool_.Execute(cmd).is_error); });
  std::printf("[ perf ] CPU time: ReadFile %.2f us, view %.2f us, overhead %.2f us\n", read_us,
              view_us, view_us - read_us);
  if (kTimingBuild) {
    EXPECT_LT(view_us - read_us, 50.0);  // typically a few us; the machine is shared
  }
}

TEST_F(MemoryToolTest, ListingTenThousandFilesIsFast) {
  auto root = temp_.store()->RootId(ns_);
  ASSERT_TRUE(root.has_value());
  for (int i = 0; i < 10000; ++i) {
    ASSERT_TRUE(
        temp_.store()->PutFile(ns_, "/memories/f" + std::to_string(i) + ".txt", "x").has_value());
  }
  const std::string cmd = R"({"command": "view", "path": "/memories"})";
  ToolResult result;
  const double list_us = MicrosPerCall(3, [&] {
    auto children = temp_.store()->ListChildren(*root);
    ASSERT_TRUE(children.has_value());
    ASSERT_EQ(children->size(), 10000u);
  });
  const double view_us = MicrosPerCall(3, [&] { result = tool_.Execute(cmd); });
  ASSERT_FALSE(result.is_error);
  EXPECT_EQ(std::count(result.content.begin(), result.content.end(), '\n'), 10001);
  EXPECT_NE(result.content.find("\n1B\t/memories/f9999.txt"), std::string::npos);
  std::printf("[ perf ] CPU time, 10,000 files: ListChildren %.2f ms, view %.2f ms\n",
              list_us / 1000, view_us / 1000);
  // memtool's own share (formatting the listing) must stay small next to the
  // store's ListChildren, which dominates; the bound is loose because the
  // machine is shared and catches only gross regressions (e.g. quadratic work).
  if (kTimingBuild) {
    EXPECT_LT(view_us, 2 * list_us + 5000);
  }
}

}  // namespace
}  // namespace memtool
