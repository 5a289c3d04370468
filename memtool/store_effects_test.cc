// memtool's effects on the store: size limits, verbatim bodies, versions on
// create and edit, history kept across rename and delete, symlinks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "grainstore/options.h"
#include "grainstore/store.h"
#include "memtool/memtool.h"
#include "test_store.h"

namespace memtool {
namespace {

using nlohmann::json;

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
  const std::string start = "A\n" + std::string(limit - 10, 'z');
  ASSERT_TRUE(temp_.store()->PutFile(ns_, "/memories/h.txt", start).has_value());
  result = Run({{"command", "str_replace"},
                {"path", "/memories/h.txt"},
                {"old_str", "A"},
                {"new_str", "0123456789AB"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "File /memories/h.txt" + message);
  result = Run({{"command", "insert"},
                {"path", "/memories/h.txt"},
                {"insert_line", 1},
                {"insert_text", "0123456789"}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "File /memories/h.txt" + message);
  auto body = temp_.store()->ReadFile(ns_, "/memories/h.txt");
  ASSERT_TRUE(body.has_value());
  EXPECT_TRUE(*body == start);
  auto history = temp_.store()->History(ns_, "/memories/h.txt");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->size(), 1u);
}

// The size limit is areev's, not the contract's: a create the contract refuses
// (a directory's path, or one below a file) says so whatever the body's size.
TEST_F(MemoryToolTest, ContractErrorsOfCreateComeBeforeTheSizeLimit) {
  const std::size_t limit = grainstore::Limits::kMaxBodyBytes;
  ASSERT_TRUE(temp_.store()->PutFile(ns_, "/memories/d/g", "1").has_value());
  const auto create = [&](const char* path) {
    return tool_.Execute(CommandWithFiller(
        std::string(R"("command": "create", "path": ")") + path + "\"", "file_text", limit + 1));
  };
  ToolResult result = create("/memories/d");
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.message, "File /memories/d already exists");
  // An existing file would be written over (project decision 1): the limit.
  result = create("/memories/d/g");
  EXPECT_EQ(result.message, "File /memories/d/g would exceed the size limit of " +
                                std::to_string(limit) + " bytes");
  result = create("/memories/d/g/h");
  EXPECT_EQ(result.message, "A parent of /memories/d/g/h is a file, not a directory");
  result = create("/memories/d/new");
  EXPECT_EQ(result.message, "File /memories/d/new would exceed the size limit of " +
                                std::to_string(limit) + " bytes");
  auto body = temp_.store()->ReadFile(ns_, "/memories/d/g");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(*body, "1");
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
  // Writes never replace a symlink: it occupies its name.
  EXPECT_EQ(Run({{"command", "create"}, {"path", "/memories/link"}, {"file_text", "x"}}).message,
            "File /memories/link already exists");
  EXPECT_EQ(
      Run({{"command", "rename"}, {"old_path", "/memories/f.txt"}, {"new_path", "/memories/link"}})
          .message,
      "The destination /memories/link already exists");
  auto link = temp_.store()->StatKey(ns_, "/memories/link");
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(link->kind, grainstore::NodeKind::kSymlink);
}

TEST_F(MemoryToolTest, ListingsHideSubtreesNotTheirNeighbours) {
  for (const char* path : {"/memories/node_modules/n.js", "/memories/node_modules.json",
                           "/memories/.git/HEAD", "/memories/.gitignore", "/memories/a/x.md",
                           "/memories/a/b/deep.md", "/memories/a.txt", "/memories/a-b/y.md"}) {
    ASSERT_FALSE(Run({{"command", "create"}, {"path", path}, {"file_text", "12"}}).is_error) << path;
  }
  // Each directory is followed by its own entries (two levels), siblings by
  // name: "a" and its entries come before "a-b" and "a.txt".
  EXPECT_EQ(ViewRoot(), std::string(kEmptyRoot) +
                            "\n4K\t/memories/a/"
                            "\n4K\t/memories/a/b/"
                            "\n2B\t/memories/a/x.md"
                            "\n4K\t/memories/a-b/"
                            "\n2B\t/memories/a-b/y.md"
                            "\n2B\t/memories/a.txt"
                            "\n2B\t/memories/node_modules.json");
}

}  // namespace
}  // namespace memtool
