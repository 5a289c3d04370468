#include "grainstore/store.h"

#include "grainstore/path.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store_fixture.h"
#include "test_util.h"

namespace grainstore {
namespace {

class StoreTest : public test::StoreFixture {};

TEST_F(StoreTest, PutReadAndVersions) {
  auto w1 = store_->PutFile(ns_, "/memories/a/prefs.md", "tea\n");
  ASSERT_TRUE(w1.has_value()) << w1.error().ToString();
  EXPECT_TRUE(w1->created);
  EXPECT_TRUE(w1->new_version);
  EXPECT_EQ(w1->seq, 1u);
  EXPECT_EQ(w1->grain_id.size(), 64u);
  EXPECT_EQ(Read("/memories/a/prefs.md"), "tea\n");
  auto dir = store_->StatKey(ns_, "/memories/a");
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->kind, NodeKind::kDirectory);

  auto w2 = store_->PutFile(ns_, "/memories/a/prefs.md", "coffee\n");
  ASSERT_TRUE(w2.has_value());
  EXPECT_FALSE(w2->created);
  EXPECT_EQ(w2->seq, 2u);
  // Identical content appends nothing.
  auto w3 = store_->PutFile(ns_, "/memories/a/prefs.md", "coffee\n");
  ASSERT_TRUE(w3.has_value());
  EXPECT_FALSE(w3->new_version);
  EXPECT_EQ(w3->seq, 2u);

  auto h = Hist("/memories/a/prefs.md");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].seq, 1u);
  EXPECT_EQ(h[1].supersedes, h[0].grain_id);
  EXPECT_EQ(h[0].op, "create");
  EXPECT_EQ(h[1].op, "edit");
  auto v1 = store_->ReadVersion(ns_, "/memories/a/prefs.md", "1");
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(*v1, "tea\n");
  auto by_id = store_->ReadVersion(ns_, "/memories/a/prefs.md", h[1].grain_id.substr(0, 10));
  ASSERT_TRUE(by_id.has_value());
  EXPECT_EQ(*by_id, "coffee\n");
  EXPECT_EQ(store_->ReadVersion(ns_, "/memories/a/prefs.md", "7").error().code(),
            StatusCode::kNotFound);
}

// Grain ids are hex, so a short id can be all digits. Such a prefix names its
// version when no version has that number.
TEST_F(StoreTest, ReadVersionByAllDigitIdPrefix) {
  const char* kKey = "/memories/digits.md";
  for (int i = 0; i < 400; ++i) {
    ASSERT_TRUE(store_->PutFile(ns_, kKey, "body " + std::to_string(i) + "\n").has_value());
    auto h = Hist(kKey);
    const std::string prefix = h.back().grain_id.substr(0, 6);
    if (prefix.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoul(prefix) <= h.size()) continue;  // names a version by number
    auto v = store_->ReadVersion(ns_, kKey, prefix);
    ASSERT_TRUE(v.has_value()) << prefix << ": " << v.error().ToString();
    EXPECT_EQ(*v, "body " + std::to_string(i) + "\n");
    return;
  }
  FAIL() << "no all-digit grain id in 400 versions";  // odds about 1e-11
}

TEST_F(StoreTest, PutErrors) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/f.txt", "x").has_value());
  EXPECT_EQ(store_->PutFile(ns_, "/memories/f.txt/child", "y").error().code(),
            StatusCode::kNotADirectory);
  ASSERT_TRUE(store_->MakeDirs(ns_, "/memories/d/e").ok());
  EXPECT_EQ(store_->PutFile(ns_, "/memories/d", "y").error().code(), StatusCode::kIsADirectory);
  EXPECT_EQ(store_->PutFile(ns_, "/memories", "y").error().code(), StatusCode::kIsADirectory);
  std::string big(Limits::kMaxBodyBytes + 1, 'x');
  EXPECT_EQ(store_->PutFile(ns_, "/memories/big", big).error().code(), StatusCode::kTooLarge);
  EXPECT_EQ(store_->StatKey(ns_, "/memories/big").error().code(), StatusCode::kNotFound);
  // What stands at the path, or above it, is named before the body's size;
  // a refused body creates none of the directories on its way.
  EXPECT_EQ(store_->PutFile(ns_, "/memories/d", big).error().code(), StatusCode::kIsADirectory);
  EXPECT_EQ(store_->PutFile(ns_, "/memories/f.txt/a/b", big).error().code(),
            StatusCode::kNotADirectory);
  EXPECT_EQ(store_->PutFile(ns_, "/memories/f.txt", big).error().code(), StatusCode::kTooLarge);
  EXPECT_EQ(Read("/memories/f.txt"), "x");
  EXPECT_EQ(store_->PutFile(ns_, "/memories/n/m/big", big).error().code(), StatusCode::kTooLarge);
  EXPECT_EQ(store_->StatKey(ns_, "/memories/n").error().code(), StatusCode::kNotFound);
  // .history is an ordinary name to the store (the mount shows its own
  // version directory under that name at its root).
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/.history", "y").has_value());
  EXPECT_EQ(Read("/memories/.history"), "y");
}

TEST_F(StoreTest, FileInTheWayNamesTheNearestNodeWhenItIsNoDirectory) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/d/f", "x").has_value());
  const auto in_the_way = [&](std::string_view key) -> std::string {
    auto found = store_->FileInTheWay(ns_, key);
    if (!found.has_value()) return "error: " + found.error().ToString();
    return found->has_value() ? (*found)->key : "none";
  };
  EXPECT_EQ(in_the_way("/memories/d/f"), "/memories/d/f");
  EXPECT_EQ(in_the_way("/memories/d/f/g/h"), "/memories/d/f");
  EXPECT_EQ(in_the_way("/memories/d"), "none");
  EXPECT_EQ(in_the_way("/memories/d/g/h"), "none");
  EXPECT_EQ(in_the_way("/memories/x/y"), "none");
  EXPECT_EQ(in_the_way("/memories"), "none");
  // The nearest existing node decides: a directory below a file cannot be,
  // so a directory found first means nothing is in the way.
  ASSERT_TRUE(store_->MakeDirs(ns_, "/memories/e/f").ok());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/e/g", "x").has_value());
  EXPECT_EQ(in_the_way("/memories/e/f/g"), "none");
  EXPECT_EQ(in_the_way("/memories/e/g/f"), "/memories/e/g");
  // Another namespace's file is no obstacle here.
  auto other = store_->Namespace("other");
  ASSERT_TRUE(other.has_value());
  ASSERT_TRUE(store_->PutFile(*other, "/memories/z", "x").has_value());
  EXPECT_EQ(in_the_way("/memories/z/a"), "none");
}

// The mount looks a name up before it removes or moves it; another process
// may give the name to another node in between. The store reports which node
// it acted on, as found in its own transaction.
// A mount's mknod: the file and its empty first version in one transaction,
// so that a failure of the version leaves no file behind.
TEST_F(StoreTest, CreateNodeCanSealAnEmptyFirstVersion) {
  auto root = *store_->RootId(ns_);
  auto made = store_->CreateNode(
      root, "n.md", NewNode{.kind = NodeKind::kFile, .mode = 0644, .seal_empty = true});
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  EXPECT_NE(made->chain_id, 0u);
  auto versions = store_->History(ns_, "/memories/n.md");
  ASSERT_TRUE(versions.has_value());
  ASSERT_EQ(versions->size(), 1u);
  EXPECT_EQ(*store_->ReadFile(ns_, "/memories/n.md"), "");
  auto plain = store_->CreateNode(root, "p.md", NewNode{.kind = NodeKind::kFile, .mode = 0644});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->chain_id, 0u);  // without it: no version until the first save
}

TEST_F(StoreTest, RemoveAndRenameReportTheNodesTheyActedOn) {
  auto root = *store_->RootId(ns_);
  const auto make = [&](const char* name) {
    auto n = store_->CreateNode(root, name, NewNode{.kind = NodeKind::kFile, .mode = 0644});
    EXPECT_TRUE(n.has_value());
    return n->id;
  };
  const NodeId first = make("f");
  // Another process moves f aside and makes a new f.
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/f", "/memories/g").ok());
  const NodeId second = make("f");
  NodeId removed = 0;
  ASSERT_TRUE(store_->RemoveNode(root, "f", false, Vacate::kVacate, &removed).ok());
  EXPECT_EQ(removed, second);
  EXPECT_EQ(store_->StatKey(ns_, "/memories/g")->id, first);

  const NodeId third = make("f");
  NodeId replaced = 1;
  auto moved = store_->RenameNode(root, "f", root, "h", RenameMode::kReplace,
                                  Versioning::kVersioned, RenameHint::kNone, &replaced);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->id, third);
  EXPECT_EQ(replaced, 0u);  // nothing lay at h
  moved = store_->RenameNode(root, "g", root, "h", RenameMode::kReplace, Versioning::kVersioned,
                             RenameHint::kNone, &replaced);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->id, first);
  EXPECT_EQ(replaced, third);
  // Over a file with a history (the target's chain continues).
  const NodeId fourth = make("k");
  ASSERT_TRUE(store_->WriteBody(first, "at h").has_value());
  ASSERT_TRUE(store_->WriteBody(fourth, "at k").has_value());
  moved = store_->RenameNode(root, "k", root, "h", RenameMode::kReplace, Versioning::kVersioned,
                             RenameHint::kNone, &replaced);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->id, fourth);
  EXPECT_EQ(replaced, first);
  EXPECT_EQ(Read("/memories/h"), "at k");
}

TEST_F(StoreTest, EditFileIsAtomicAndPropagatesCallbackErrors) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/n.txt", "a\n").has_value());
  auto w = store_->EditFile(ns_, "/memories/n.txt", [](std::string_view cur, std::string* next) {
    *next = std::string(cur) + "b\n";
    return Status::Ok();
  });
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(Read("/memories/n.txt"), "a\nb\n");
  auto bad = store_->EditFile(ns_, "/memories/n.txt", [](std::string_view, std::string* next) {
    *next = "should not land";
    return Status::Conflict("nope");
  });
  EXPECT_EQ(bad.error().code(), StatusCode::kConflict);
  EXPECT_EQ(bad.error().message(), "nope");
  EXPECT_EQ(Read("/memories/n.txt"), "a\nb\n");
  EXPECT_EQ(store_->EditFile(ns_, "/memories/none", {}).error().code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, DeleteRestorePurge) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/old.md", "SECRET-MARKER-1\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/old.md", "SECRET-MARKER-2\n").has_value());
  EXPECT_EQ(store_->Purge(ns_, "/memories/old.md").code(), StatusCode::kConflict);
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/old.md").ok());
  EXPECT_EQ(store_->StatKey(ns_, "/memories/old.md").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(Hist("/memories/old.md").size(), 2u);  // still readable
  ASSERT_TRUE(store_->Restore(ns_, "/memories/old.md").ok());
  EXPECT_EQ(Read("/memories/old.md"), "SECRET-MARKER-2\n");
  EXPECT_EQ(store_->Restore(ns_, "/memories/old.md").code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/old.md").ok());
  ASSERT_TRUE(store_->Purge(ns_, "/memories/old.md").ok());
  auto purged = store_->ReadVersion(ns_, "/memories/old.md", "1");
  EXPECT_EQ(purged.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(purged.error().message(), "version 1 of /memories/old.md was purged");
  auto h = Hist("/memories/old.md");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_TRUE(h[0].purged);
  store_.reset();
  for (const char* suffix : {"", "-wal"}) {
    const std::string raw = test::FileBytes(path_ + suffix);
    EXPECT_EQ(raw.find("SECRET-MARKER"), std::string::npos) << "plaintext left in " << suffix;
  }
}

// While another process runs a checkpoint, SQLite refuses a second one at
// once. The purge is committed by then; its WAL truncation waits its turn
// instead of failing, and leaves no plaintext behind.
TEST_F(StoreTest, PurgeWaitsOutAnotherProcessesCheckpoint) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/s.md", "SECRET-MARKER-3\n").has_value());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/s.md").ok());
  // A child process holds the WAL index's checkpoint lock (byte 121 of the
  // -shm file: locks start at 120, the writer's first) for 400 ms.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = open((path_ + "-shm").c_str(), O_RDWR);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 121;
    lock.l_len = 1;
    const char ok = fd >= 0 && fcntl(fd, F_SETLK, &lock) == 0 ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(2);
    usleep(400'000);
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  close(ready[1]);
  ASSERT_EQ(ok, 'y');
  const auto start = std::chrono::steady_clock::now();
  const Status purged = store_->Purge(ns_, "/memories/s.md");
  const auto waited = std::chrono::steady_clock::now() - start;
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(purged.ok()) << purged.ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(100));  // it did meet the lock
  // Purging again is a no-op that may finish an interrupted truncation.
  EXPECT_TRUE(store_->Purge(ns_, "/memories/s.md").ok());
  EXPECT_EQ(store_->Purge(ns_, "/memories/never.md").code(), StatusCode::kNotFound);
  store_.reset();
  for (const char* suffix : {"", "-wal"}) {
    const std::string raw = test::FileBytes(path_ + suffix);
    EXPECT_EQ(raw.find("SECRET-MARKER"), std::string::npos) << "plaintext left in " << suffix;
  }
}

// The names under a directory of every file that ever lay there (not purged),
// once each, also when the directory itself is gone.
TEST_F(StoreTest, ChainNamesUnderReachGoneDirectories) {
  for (const char* k : {"/memories/d/a", "/memories/d/a.md", "/memories/d/b/x.md",
                        "/memories/d/b/y/z.md", "/memories/d/c.md", "/memories/dz.md"}) {
    ASSERT_TRUE(store_->PutFile(ns_, k, "x").has_value());
  }
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/d/a").ok());
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/d/a.md", "/memories/d/a/inner.md").code() ==
              StatusCode::kOk);
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/d/c.md").ok());
  ASSERT_TRUE(store_->Purge(ns_, "/memories/d/c.md").ok());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/d").ok());
  auto names = store_->ChainNamesUnder(ns_, "/memories/d", 100);
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*store_->ChainNamesUnder(ns_, "/memories/d/b", 100),
            (std::vector<std::string>{"x.md", "y"}));
  EXPECT_EQ(store_->ChainNamesUnder(ns_, "/memories/d", 1)->size(), 1u);
  EXPECT_TRUE(store_->ChainNamesUnder(ns_, "/memories/none", 100)->empty());
}

// Two files deleted at one path in turn: both chains stay reachable.
TEST_F(StoreTest, OlderChainsAtAReusedPathStayReachable) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/s.md", "OLD\n").has_value());
  const std::string old_id = Hist("/memories/s.md")[0].grain_id;
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/s.md").ok());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/s.md", "NEW\n").has_value());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/s.md").ok());
  auto chains = store_->ChainsAt(ns_, "/memories/s.md");
  ASSERT_TRUE(chains.has_value());
  ASSERT_EQ(chains->size(), 2u);
  const ChainId newer = (*chains)[0].id, older = (*chains)[1].id;
  EXPECT_GT(newer, older);
  EXPECT_NE(Hist("/memories/s.md")[0].grain_id, old_id);  // History shows the newer
  EXPECT_EQ(*store_->ReadVersion(ns_, "/memories/s.md", "1"), "NEW\n");
  EXPECT_EQ(*store_->ReadVersion(ns_, "/memories/s.md", old_id.substr(0, 8)), "OLD\n");
  EXPECT_EQ(*store_->ReadChainVersion(older, "/memories/s.md", "1"), "OLD\n");
  EXPECT_EQ(store_->ChainAt(ns_, "/memories/other.md", older).error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->Restore(ns_, "/memories/s.md", 12345).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->Restore(ns_, "/memories/s.md", older).ok());
  EXPECT_EQ(Read("/memories/s.md"), "OLD\n");
  EXPECT_EQ(store_->ChainAt(ns_, "/memories/s.md", newer)->state, ChainState::kDeleted);
}

TEST_F(StoreTest, DeleteDirectoryTombstonesEveryFile) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/d/x.md", "x").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/d/sub/y.md", "y").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/dz.md", "z").has_value());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/d").ok());
  EXPECT_EQ(store_->StatKey(ns_, "/memories/d/sub/y.md").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(Read("/memories/dz.md"), "z");  // a sibling sharing the prefix survives
  auto chain = store_->FindChain(ns_, "/memories/d/sub/y.md");
  ASSERT_TRUE(chain.has_value());
  EXPECT_EQ(chain->state, ChainState::kDeleted);
  EXPECT_EQ(store_->DeleteKey(ns_, "/memories").code(), StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, RenameMovesChainWithProvenance) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "1").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "2").has_value());
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/a.md", "/memories/new/b.md").ok());
  EXPECT_EQ(Read("/memories/new/b.md"), "2");
  auto h = Hist("/memories/new/b.md");
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].subject, "/memories/a.md");
  EXPECT_EQ(h[2].op, "rename");
  EXPECT_EQ(h[2].derived_from, h[1].grain_id);
  EXPECT_EQ(h[2].subject, "/memories/new/b.md");
  EXPECT_EQ(store_->RenameKey(ns_, "/memories/nope", "/memories/x").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->StatKey(ns_, "/memories/x").error().code(), StatusCode::kNotFound);
}

TEST_F(StoreTest, RenameDirectoryRekeysSubtree) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/p/q/r.md", "r").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/pz.md", "z").has_value());
  EXPECT_EQ(store_->RenameKey(ns_, "/memories/p", "/memories/p/inner").code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/p", "/memories/moved").ok());
  EXPECT_EQ(Read("/memories/moved/q/r.md"), "r");
  EXPECT_EQ(Read("/memories/pz.md"), "z");
  EXPECT_EQ(Hist("/memories/moved/q/r.md").size(), 2u);
  EXPECT_EQ(ChildKeys("/memories/moved/q"), (std::vector<std::string>{"/memories/moved/q/r.md"}));
}

// Keys are cut by bytes: a directory whose path holds multi-byte characters
// moves its subtree to the new path and nowhere else.
TEST_F(StoreTest, RenameDirectoryWithMultibyteNamesRekeysByBytes) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/\xc3\xa9/a.txt", "a").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/\xe6\x97\xa5/\xf0\x9f\x98\x80/b.txt", "b")
                  .has_value());
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/\xc3\xa9", "/memories/b").ok());
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/\xe6\x97\xa5", "/memories/\xc3\xa9\xc3\xa9").ok());
  EXPECT_EQ(Read("/memories/b/a.txt"), "a");
  EXPECT_EQ(Read("/memories/\xc3\xa9\xc3\xa9/\xf0\x9f\x98\x80/b.txt"), "b");
  EXPECT_EQ(store_->StatKey(ns_, "/memories/ba.txt").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(ChildKeys("/memories/\xc3\xa9\xc3\xa9/\xf0\x9f\x98\x80"),
            (std::vector<std::string>{"/memories/\xc3\xa9\xc3\xa9/\xf0\x9f\x98\x80/b.txt"}));
  EXPECT_EQ(Hist("/memories/b/a.txt").back().subject, "/memories/b/a.txt");
}

// A directory rename that would push a path under it past kMaxKeyBytes is
// refused whole: every file stays readable at its old path.
TEST_F(StoreTest, RenameDirectoryRefusesPathsPastTheKeyLimit) {
  std::string deep = "/memories/d";
  while (deep.size() + 251 <= kMaxKeyBytes - 20) deep += "/" + std::string(250, 'z');
  const std::string file = deep + "/keep.md";
  ASSERT_LE(file.size(), kMaxKeyBytes);
  ASSERT_TRUE(store_->PutFile(ns_, file, "v1").has_value());
  const std::size_t room = kMaxKeyBytes - file.size();
  // A new name one byte longer than the room left: the file would pass 4096.
  const std::string too_long = "/memories/" + std::string(1 + room + 1, 'n');
  EXPECT_EQ(store_->RenameKey(ns_, "/memories/d", too_long).code(), StatusCode::kNameTooLong);
  EXPECT_EQ(Read(file), "v1");
  EXPECT_EQ(Hist(file).size(), 1u);
  EXPECT_EQ(store_->StatKey(ns_, too_long).error().code(), StatusCode::kNotFound);
  // Exactly at the limit is fine.
  const std::string fits = "/memories/" + std::string(1 + room, 'n');
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/d", fits).ok());
  const std::string moved = fits + file.substr(std::string("/memories/d").size());
  ASSERT_EQ(moved.size(), kMaxKeyBytes);
  EXPECT_EQ(Read(moved), "v1");
}

TEST_F(StoreTest, ListChildrenSortsBytewise) {
  for (const char* k : {"/memories/b", "/memories/B", "/memories/_u", "/memories/\xc3\xa9",
                        "/memories/10", "/memories/9"}) {
    ASSERT_TRUE(store_->PutFile(ns_, k, "x").has_value());
  }
  auto root = store_->RootId(ns_);
  ASSERT_TRUE(root.has_value());
  auto kids = store_->ListChildren(*root);
  ASSERT_TRUE(kids.has_value());
  std::vector<std::string> names;
  for (auto& k : *kids) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"10", "9", "B", "_u", "b", "\xc3\xa9"}));
}

TEST_F(StoreTest, ListTreeMatchesListChildren) {
  for (const char* k : {"/memories/b.md", "/memories/B/x.md", "/memories/10", "/memories/9"}) {
    ASSERT_TRUE(store_->PutFile(ns_, k, std::string(std::strlen(k), 'x')).has_value());
  }
  auto root = store_->RootId(ns_);
  ASSERT_TRUE(root.has_value());
  NewNode link{.kind = NodeKind::kSymlink, .symlink_target = "b.md"};
  ASSERT_TRUE(store_->CreateNode(*root, "link", link).has_value());
  const auto all = [](std::string_view, NodeKind) { return true; };
  auto kids = store_->ListChildren(*root);
  auto entries = store_->ListTree(ns_, "/memories", 1, all);
  ASSERT_TRUE(kids.has_value());
  ASSERT_TRUE(entries.has_value());
  ASSERT_EQ(entries->size(), 5u);
  ASSERT_EQ(entries->size(), kids->size());
  for (std::size_t i = 0; i < kids->size(); ++i) {
    SCOPED_TRACE((*kids)[i].key);
    EXPECT_EQ((*entries)[i].id, (*kids)[i].id);
    EXPECT_EQ((*entries)[i].path, (*kids)[i].name);
    EXPECT_EQ((*entries)[i].kind, (*kids)[i].kind);
    EXPECT_EQ((*entries)[i].size, (*kids)[i].size);
  }
  EXPECT_EQ((*entries)[0].path, "10");
  EXPECT_EQ((*entries)[1].kind, NodeKind::kFile);
  EXPECT_EQ((*entries)[1].size, std::strlen("/memories/9"));
  EXPECT_EQ((*entries)[2].path, "B");
  EXPECT_EQ((*entries)[2].kind, NodeKind::kDirectory);
  EXPECT_EQ((*entries)[4].kind, NodeKind::kSymlink);
  auto none = store_->ListTree(ns_, "/memories/9", 1, all);  // a file has no children
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST_F(StoreTest, ReadFileReportsTheNodeThatIsNotAFile) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/d/f.md", "x").has_value());
  NodeInfo info;
  auto body = store_->ReadFile(ns_, "/memories/d", &info);
  ASSERT_FALSE(body.has_value());
  EXPECT_EQ(body.error().code(), StatusCode::kIsADirectory);
  EXPECT_EQ(info.kind, NodeKind::kDirectory);
  EXPECT_EQ(info.key, "/memories/d");
  auto stat = store_->StatKey(ns_, "/memories/d");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(info.id, stat->id);
}

TEST_F(StoreTest, NamespacesIsolate) {
  auto other = store_->Namespace("assistant");
  ASSERT_TRUE(other.has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/x", "default").has_value());
  EXPECT_EQ(store_->StatKey(*other, "/memories/x").error().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->PutFile(*other, "/memories/x", "assistant").has_value());
  EXPECT_EQ(Read("/memories/x"), "default");
  EXPECT_EQ(store_->Namespace("bad name!").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->FindNamespace("missing").error().code(), StatusCode::kNotFound);
}

// Only a file saved through the mount is a temp file by behaviour: a young
// one-version file the memory tool wrote keeps a tombstone when the mount
// unlinks it, and can be restored.
TEST_F(StoreTest, UnlinkDiscardsOnlyYoungFilesSavedThroughTheMount) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/agent.md", "IMPORTANT\n").has_value());
  auto root = *store_->RootId(ns_);
  NewNode file{.kind = NodeKind::kFile, .mode = 0644};
  auto saved = store_->CreateNode(root, "scratch.md", file);
  ASSERT_TRUE(saved.has_value());
  ASSERT_TRUE(store_->WriteBody(saved->id, "scratch\n").has_value());
  ASSERT_TRUE(store_->RemoveNode(root, "agent.md", false).ok());
  ASSERT_TRUE(store_->RemoveNode(root, "scratch.md", false).ok());

  auto kept = store_->History(ns_, "/memories/agent.md");
  ASSERT_TRUE(kept.has_value()) << kept.error().ToString();
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ(store_->History(ns_, "/memories/scratch.md").error().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->Restore(ns_, "/memories/agent.md").ok());
  EXPECT_EQ(Read("/memories/agent.md"), "IMPORTANT\n");
}

// A save that amends the mount-saved version it supersedes marks that version
// transient; it stays in the history, readable. Anything else marks nothing:
// a version the memory tool wrote in between, or an id that is not the
// superseded version's.
TEST_F(StoreTest, WriteBodyAmendsOnlyTheMountSavedVersionItSupersedes) {
  auto root = *store_->RootId(ns_);
  NewNode file{.kind = NodeKind::kFile, .mode = 0644};
  auto n = store_->CreateNode(root, "log.md", file);
  ASSERT_TRUE(n.has_value());
  auto v1 = store_->WriteBody(n->id, "one\n");
  ASSERT_TRUE(v1.has_value());
  auto v2 = store_->WriteBody(n->id, "one\ntwo\n", std::nullopt, v1->grain_id);
  ASSERT_TRUE(v2.has_value());
  // Not the superseded version: v1 again, and a malformed id.
  auto v3 = store_->WriteBody(n->id, "one\ntwo\n3\n", std::nullopt, v1->grain_id);
  ASSERT_TRUE(v3.has_value());
  auto v4 = store_->WriteBody(n->id, "4\n", std::nullopt, "zz");
  ASSERT_TRUE(v4.has_value());
  // Written by the memory tool: never marked, whatever the mount names.
  auto v5 = store_->PutFile(ns_, "/memories/log.md", "agent\n");
  ASSERT_TRUE(v5.has_value());
  auto v6 = store_->WriteBody(n->id, "6\n", std::nullopt, v5->grain_id);
  ASSERT_TRUE(v6.has_value());
  // Identical content seals nothing and marks nothing.
  auto same = store_->WriteBody(n->id, "6\n", std::nullopt, v6->grain_id);
  ASSERT_TRUE(same.has_value());
  EXPECT_FALSE(same->new_version);

  auto versions = store_->History(ns_, "/memories/log.md");
  ASSERT_TRUE(versions.has_value()) << versions.error().ToString();
  std::vector<bool> transient;
  for (const VersionInfo& v : *versions) transient.push_back(v.transient);
  EXPECT_EQ(transient, (std::vector<bool>{true, false, false, false, false, false}));
  auto first = store_->ReadVersion(ns_, "/memories/log.md", v1->grain_id);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, "one\n");
}

// A save's change time is the draft's last change, as on a local disk: its
// last write (the mtime the mount passes) or a later chmod or utimens, never
// the moment it is sealed, and never past that moment.
TEST_F(StoreTest, WriteBodyKeepsTheLastChangeAsTheChangeTime) {
  auto root = *store_->RootId(ns_);
  auto n = store_->CreateNode(root, "held.md", NewNode{.kind = NodeKind::kFile, .mode = 0644});
  ASSERT_TRUE(n.has_value());
  const std::int64_t written = n->ctime_ns + 1;  // a write after the create
  auto saved = store_->WriteBody(n->id, "one\n", written);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->node.mtime_ns, written);
  EXPECT_EQ(saved->node.ctime_ns, written);
  EXPECT_EQ(store_->GetNode(n->id)->ctime_ns, written);

  // A chmod after the next write: the change time is the chmod's.
  auto chmod = store_->SetAttributes(n->id, AttrUpdate{.mode = 0600});
  ASSERT_TRUE(chmod.has_value());
  ASSERT_GT(chmod->ctime_ns, written);
  saved = store_->WriteBody(n->id, "two\n", written + 1);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->node.mtime_ns, written + 1);
  EXPECT_EQ(saved->node.ctime_ns, chmod->ctime_ns);

  // An mtime set in the future (utimens) was set no later than the save.
  const std::int64_t future = chmod->ctime_ns + std::int64_t{3600} * 1'000'000'000;
  saved = store_->WriteBody(n->id, "three\n", future);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->node.mtime_ns, future);
  EXPECT_GE(saved->node.ctime_ns, chmod->ctime_ns);
  EXPECT_LT(saved->node.ctime_ns, future);

  // The memory tool's writes change the file now.
  auto tool = store_->PutFile(ns_, "/memories/held.md", "four\n");
  ASSERT_TRUE(tool.has_value());
  EXPECT_EQ(tool->node.ctime_ns, tool->node.mtime_ns);
  EXPECT_GE(tool->node.ctime_ns, saved->node.ctime_ns);
}

// Bytes appended to a body another writer has replaced since go after that
// writer's body (O_APPEND through the mount); with the body unchanged, or
// without `appended_to`, the body is stored as given.
TEST_F(StoreTest, WriteBodyAppendsAfterABodyStoredMeanwhile) {
  auto root = *store_->RootId(ns_);
  NewNode file{.kind = NodeKind::kFile, .mode = 0644};
  auto n = store_->CreateNode(root, "log.md", file);
  ASSERT_TRUE(n.has_value());
  ASSERT_TRUE(store_->WriteBody(n->id, "start\n").has_value());
  NodeInfo info;
  BodyBase base;
  auto read = store_->ReadBody(n->id, &info, &base);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, "start\n");
  EXPECT_EQ(info.size, 6u);
  EXPECT_EQ(base.size, 6u);
  EXPECT_GT(base.body, 0);

  // Unchanged since the read: stored as given, not rebased.
  auto same = store_->WriteBody(n->id, "start\none\n", std::nullopt, {}, &base);
  ASSERT_TRUE(same.has_value());
  EXPECT_FALSE(same->rebased);
  EXPECT_EQ(same->base.size, 10u);

  // Another writer replaces the body; the mount's appends follow it.
  const BodyBase after_one = same->base;
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/log.md", "START\none\n").has_value());
  auto rebased =
      store_->WriteBody(n->id, "start\none\ntwo\n", std::nullopt, {}, &after_one);
  ASSERT_TRUE(rebased.has_value());
  EXPECT_TRUE(rebased->rebased);
  EXPECT_EQ(rebased->body, "START\none\ntwo\n");
  EXPECT_EQ(rebased->node.size, rebased->body.size());
  EXPECT_EQ(*store_->ReadBody(n->id), "START\none\ntwo\n");

  // Without appended_to, the last writer's body wins as before.
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/log.md", "agent\n").has_value());
  auto plain = store_->WriteBody(n->id, "mine\n");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->rebased);
  EXPECT_EQ(*store_->ReadBody(n->id), "mine\n");
}

// rsync's first copy of a file: `.NAME.XXXXXX` saved through the mount, then
// renamed to the new name NAME. One version, created at NAME; without the
// hint (an explicit mv) the chain moves and records the rename.
TEST_F(StoreTest, TempCopyRenamedToItsNewNameIsOneVersion) {
  auto root = *store_->RootId(ns_);
  NewNode file{.kind = NodeKind::kFile, .mode = 0644};
  for (const char* tmp : {".a.md.Xy3aQ9", ".b.md.Zz9pQ1"}) {
    auto n = store_->CreateNode(root, tmp, file);
    ASSERT_TRUE(n.has_value());
    ASSERT_TRUE(store_->WriteBody(n->id, "hello\n").has_value());
  }
  ASSERT_TRUE(store_->RenameNode(root, ".a.md.Xy3aQ9", root, "a.md", RenameMode::kReplace,
                                 Versioning::kVersioned, RenameHint::kTempCopy)
                  .has_value());
  ASSERT_TRUE(store_->RenameNode(root, ".b.md.Zz9pQ1", root, "b.md", RenameMode::kReplace,
                                 Versioning::kVersioned)
                  .has_value());
  auto a = Hist("/memories/a.md");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].op, "create");
  EXPECT_EQ(a[0].subject, "/memories/a.md");
  EXPECT_EQ(Read("/memories/a.md"), "hello\n");
  EXPECT_EQ(store_->FindChain(ns_, "/memories/.a.md.Xy3aQ9").error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Hist("/memories/b.md").size(), 2u);
  // A file the memory tool wrote keeps its chain even under the hint.
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/.c.md.Qq1234", "agent\n").has_value());
  ASSERT_TRUE(store_->RenameNode(root, ".c.md.Qq1234", root, "c.md", RenameMode::kReplace,
                                 Versioning::kVersioned, RenameHint::kTempCopy)
                  .has_value());
  EXPECT_EQ(Hist("/memories/c.md").size(), 2u);
}

// A rename records where the content came from: the moved file's rename
// version in the op-log, and over an existing file the target's new version
// derives from the source's last one.
TEST_F(StoreTest, RenamesRecordProvenance) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "a1\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "a2\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/dst.md", "d1\n").has_value());
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/a.md", "/memories/src.md").ok());
  const std::string src_head = Hist("/memories/src.md").back().grain_id;
  auto root = *store_->RootId(ns_);
  ASSERT_TRUE(store_->RenameNode(root, "src.md", root, "dst.md", RenameMode::kReplace,
                                 Versioning::kVersioned)
                  .has_value());
  auto dst = Hist("/memories/dst.md");
  ASSERT_EQ(dst.size(), 2u);
  EXPECT_EQ(dst[1].op, "edit");
  EXPECT_EQ(dst[1].derived_from, src_head);
  auto ops = store_->ReadOps(ns_, 0, 1000);
  ASSERT_TRUE(ops.has_value());
  std::vector<std::string> renames;
  for (const auto& op : *ops) {
    if (op.op == "rename") renames.push_back(op.grain_id);
  }
  EXPECT_EQ(renames, (std::vector<std::string>{src_head, ""}));
  // Over an existing file, in the order the log replays in: src.md's chain
  // leaves it, dst.md's node goes, the file moves there, its new version.
  ASSERT_GE(ops->size(), 4u);
  std::vector<std::string> last;
  for (auto it = ops->end() - 4; it != ops->end(); ++it) {
    last.push_back(it->op + " " + it->subject + " " + it->new_subject + " " + it->grain_id);
  }
  EXPECT_EQ(last, (std::vector<std::string>{
                      "vacate /memories/src.md /memories/dst.md ",
                      "unlink /memories/dst.md  ",
                      "rename /memories/src.md /memories/dst.md ",
                      "supersede /memories/dst.md  " + dst[1].grain_id}));
}

// The op-log names chains by id: a discarded chain's id is never handed to
// another file, also across reopening the store.
TEST_F(StoreTest, ChainIdsAreNeverReused) {
  auto root = *store_->RootId(ns_);
  NewNode file{.kind = NodeKind::kFile, .mode = 0644};
  auto scratch = store_->CreateNode(root, "scratch.md", file);
  ASSERT_TRUE(scratch.has_value());
  ASSERT_TRUE(store_->WriteBody(scratch->id, "scratch\n").has_value());
  const ChainId discarded = store_->FindChain(ns_, "/memories/scratch.md")->id;
  ASSERT_TRUE(store_->RemoveNode(root, "scratch.md", false).ok());
  ASSERT_EQ(store_->FindChain(ns_, "/memories/scratch.md").error().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/next.md", "next\n").has_value());
  EXPECT_GT(store_->FindChain(ns_, "/memories/next.md")->id, discarded);
  auto again = store_->CreateNode(root, "again.md", file);
  ASSERT_TRUE(again.has_value());
  ASSERT_TRUE(store_->WriteBody(again->id, "again\n").has_value());
  const ChainId second = store_->FindChain(ns_, "/memories/again.md")->id;
  ASSERT_TRUE(store_->RemoveNode(root, "again.md", false).ok());
  store_.reset();
  auto reopened = Store::Open(path_);
  ASSERT_TRUE(reopened.has_value());
  ASSERT_TRUE((*reopened)->PutFile(ns_, "/memories/last.md", "last\n").has_value());
  EXPECT_GT((*reopened)->FindChain(ns_, "/memories/last.md")->id, second);
}

TEST_F(StoreTest, MountStyleRenameOverContinuesTargetChain) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/notes.md", "v1\n").has_value());
  auto root = *store_->RootId(ns_);
  auto target = *store_->Lookup(root, "notes.md");
  // sed -i: a temp file, written, renamed over the target.
  NewNode tmp_spec{.kind = NodeKind::kFile, .mode = 0644, .versioning = Versioning::kUnversioned};
  auto tmp = store_->CreateNode(root, "sedAbc123", tmp_spec);
  ASSERT_TRUE(tmp.has_value()) << tmp.error().ToString();
  ASSERT_TRUE(store_->WriteBody(tmp->id, "v2\n").has_value());
  auto moved = store_->RenameNode(root, "sedAbc123", root, "notes.md", RenameMode::kReplace,
                                  Versioning::kVersioned);
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(moved->id, tmp->id);  // st_ino follows the temp file
  EXPECT_EQ(moved->chain_id, target.chain_id);
  EXPECT_EQ(Read("/memories/notes.md"), "v2\n");
  auto h = Hist("/memories/notes.md");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].subject, "/memories/notes.md");
  EXPECT_FALSE(store_->FindChain(ns_, "/memories/sedAbc123").has_value());
  EXPECT_EQ(store_->RenameNode(root, "gone", root, "x", RenameMode::kReplace,
                               Versioning::kVersioned)
                .error()
                .code(),
            StatusCode::kNotFound);
}

// A rename over a file with a history continues it, whatever the new name's
// policy: the memory tool made the file under a name the mount keeps
// unversioned.
TEST_F(StoreTest, RenameOverAFileWithAHistoryContinuesItUnderAnyName) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/notes.bak", "v1\n").has_value());
  auto root = *store_->RootId(ns_);
  NewNode tmp_spec{.kind = NodeKind::kFile, .mode = 0644, .versioning = Versioning::kUnversioned};
  auto tmp = store_->CreateNode(root, "sedAbc123", tmp_spec);
  ASSERT_TRUE(tmp.has_value());
  ASSERT_TRUE(store_->WriteBody(tmp->id, "v2\n").has_value());
  ASSERT_TRUE(store_->RenameNode(root, "sedAbc123", root, "notes.bak", RenameMode::kReplace,
                                 Versioning::kUnversioned)
                  .has_value());
  auto h = Hist("/memories/notes.bak");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(Read("/memories/notes.bak"), "v2\n");
  EXPECT_EQ(store_->FindChain(ns_, "/memories/notes.bak")->state, ChainState::kLive);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// The memory tool's writes are versions: a file stored unversioned becomes
// versioned, its content so far the first version (if any, and different).
TEST_F(StoreTest, MemoryToolWritesVersionAFileStoredUnversioned) {
  auto root = *store_->RootId(ns_);
  NewNode spec{.kind = NodeKind::kFile, .mode = 0644, .versioning = Versioning::kUnversioned};
  auto kept = store_->CreateNode(root, "a.bak", spec);
  ASSERT_TRUE(kept.has_value());
  ASSERT_TRUE(store_->WriteBody(kept->id, "draft\n").has_value());
  ASSERT_FALSE(store_->History(ns_, "/memories/a.bak").has_value());
  auto edited = store_->EditFile(ns_, "/memories/a.bak", [](std::string_view in, std::string* out) {
    *out = std::string(in) + "more\n";
    return Status::Ok();
  });
  ASSERT_TRUE(edited.has_value()) << edited.error().ToString();
  auto h = Hist("/memories/a.bak");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].op, "create");
  EXPECT_EQ(*store_->ReadVersion(ns_, "/memories/a.bak", "1"), "draft\n");
  EXPECT_EQ(h[1].op, "edit");
  // The same content written again is one version; an empty file, none before.
  auto same = store_->CreateNode(root, "b.bak", spec);
  ASSERT_TRUE(store_->WriteBody(same->id, "x\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/b.bak", "x\n").has_value());
  EXPECT_EQ(Hist("/memories/b.bak").size(), 1u);
  ASSERT_TRUE(store_->CreateNode(root, "c.bak", spec).has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/c.bak", "y\n").has_value());
  EXPECT_EQ(Hist("/memories/c.bak").size(), 1u);
  EXPECT_EQ(store_->GetNode(same->id)->versioning, Versioning::kVersioned);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

TEST_F(StoreTest, EditorSaveDanceRevivesTheChain) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/v.md", "one\n").has_value());
  auto root = *store_->RootId(ns_);
  // vim: name -> name~, new name written, name~ unlinked.
  ASSERT_TRUE(store_->RenameNode(root, "v.md", root, "v.md~", RenameMode::kReplace,
                                 Versioning::kUnversioned)
                  .has_value());
  NewNode spec{.kind = NodeKind::kFile, .mode = 0644};
  auto fresh = store_->CreateNode(root, "v.md", spec);
  ASSERT_TRUE(fresh.has_value());
  ASSERT_TRUE(store_->WriteBody(fresh->id, "two\n").has_value());
  ASSERT_TRUE(store_->RemoveNode(root, "v.md~", false).ok());
  auto h = Hist("/memories/v.md");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].op, "create");
  EXPECT_EQ(h[1].op, "edit");
  EXPECT_EQ(Read("/memories/v.md"), "two\n");
  auto chain = store_->FindChain(ns_, "/memories/v.md");
  ASSERT_TRUE(chain.has_value());
  EXPECT_EQ(chain->state, ChainState::kLive);
}

TEST_F(StoreTest, NodeLevelPosixErrors) {
  auto root = *store_->RootId(ns_);
  NewNode dir{.kind = NodeKind::kDirectory, .mode = 0755};
  auto d = store_->CreateNode(root, "d", dir);
  ASSERT_TRUE(d.has_value());
  NewNode file{.kind = NodeKind::kFile, .mode = 0600};
  ASSERT_TRUE(store_->CreateNode(d->id, "f", file).has_value());
  EXPECT_EQ(store_->CreateNode(d->id, "f", file).error().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->RemoveNode(root, "d", true).code(), StatusCode::kNotEmpty);
  EXPECT_EQ(store_->RemoveNode(root, "d", false).code(), StatusCode::kIsADirectory);
  EXPECT_EQ(store_->RemoveNode(d->id, "f", true).code(), StatusCode::kNotADirectory);
  EXPECT_EQ(store_->RenameNode(root, "d", d->id, "inside", RenameMode::kReplace,
                               Versioning::kVersioned)
                .error()
                .code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->CreateNode(root, "g", file).has_value());
  EXPECT_EQ(store_->RenameNode(root, "g", d->id, "f", RenameMode::kNoReplace,
                               Versioning::kVersioned)
                .error()
                .code(),
            StatusCode::kAlreadyExists);
  NewNode link{.kind = NodeKind::kSymlink, .symlink_target = "../elsewhere"};
  auto l = store_->CreateNode(root, "l", link);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->size, 12u);  // st_size of a symlink is its target length
  auto set = store_->SetAttributes(l->id, AttrUpdate{.mtime_ns = 123456789012345678});
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(store_->GetNode(l->id)->mtime_ns, 123456789012345678);
}

TEST_F(StoreTest, FactsSupersedeAndRecall) {
  auto f1 = store_->AddFact(ns_, {.subject = "alice", .relation = "prefers", .object = "tea"});
  ASSERT_TRUE(f1.has_value());
  auto f2 = store_->AddFact(ns_, {.subject = "alice", .relation = "prefers", .object = "coffee"});
  ASSERT_TRUE(f2.has_value());
  ASSERT_TRUE(store_->AddFact(ns_, {.type = GrainType::kEvent, .subject = "alice",
                                    .relation = "visited", .object = "paris"})
                  .has_value());
  auto live = store_->Recall(ns_, "alice", "", false);
  ASSERT_TRUE(live.has_value());
  ASSERT_EQ(live->size(), 2u);
  auto all = store_->Recall(ns_, "alice", "prefers", true);
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].object, "coffee");
  EXPECT_TRUE((*all)[0].live);
  EXPECT_FALSE((*all)[1].live);
  EXPECT_EQ(store_->AddFact(ns_, {.subject = "x", .relation = "memory_file"}).error().code(),
            StatusCode::kInvalidArgument);
  // Blank names are refused like empty ones, and nothing is written.
  for (const char* blank : {"", " ", "\t\n", "\u00a0", "\u200b\u3000", "\ufeff"}) {
    EXPECT_EQ(store_->AddFact(ns_, {.subject = blank, .relation = "r"}).error().code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->AddFact(ns_, {.subject = "x", .relation = blank}).error().code(),
              StatusCode::kInvalidArgument);
  }
  auto none = store_->Recall(ns_, "x", "", true);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST_F(StoreTest, OpLogRecordsEveryOperationWithCursor) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a", "1").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a", "2").has_value());
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/a", "/memories/b").ok());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/b").ok());
  auto ops = store_->ReadOps(0, 0, 100);
  ASSERT_TRUE(ops.has_value());
  std::vector<std::string> names;
  for (auto& o : *ops) names.push_back(o.op);
  EXPECT_EQ(names, (std::vector<std::string>{"add", "supersede", "rename", "delete"}));
  EXPECT_EQ((*ops)[2].new_subject, "/memories/b");
  EXPECT_EQ((*ops)[0].origin, store_->origin());
  auto tail = store_->ReadOps(ns_, (*ops)[1].seq, 100);
  ASSERT_EQ(tail->size(), 2u);
  EXPECT_EQ(*store_->LastOpSeq(), (*ops)[3].seq);
}

TEST_F(StoreTest, AVersionIsNeverOlderThanTheOneItSupersedes) {
  // The wall clock may step back between two writes (NTP, a VM resumed).
  // Stand-in: the first version's time lies an hour ahead.
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/t.md", "one\n").has_value());
  ASSERT_TRUE(
      test::PlainExec(path_, "UPDATE grains SET created_ns = created_ns + 3600000000000"));
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/t.md", "two\n").has_value());
  auto h = Hist("/memories/t.md");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_GE(h[1].created_ns, h[0].created_ns) << h[0].created_ns << " " << h[1].created_ns;
}

TEST_F(StoreTest, NodeIdsAreNeverReused) {
  // Node ids are the mount's inode numbers: the kernel may still hold a
  // deleted file's. The newest node is deleted, then a file takes its place.
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "a").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/b.md", "b").has_value());
  const NodeId b = store_->StatKey(ns_, "/memories/b.md")->id;
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/b.md").ok());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/c.md", "c").has_value());
  EXPECT_GT(store_->StatKey(ns_, "/memories/c.md")->id, b);
  // And across reopening the store.
  const NodeId c = store_->StatKey(ns_, "/memories/c.md")->id;
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/c.md").ok());
  store_.reset();
  auto reopened = Store::Open(path_);
  ASSERT_TRUE(reopened.has_value());
  store_ = std::move(*reopened);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/d.md", "d").has_value());
  EXPECT_GT(store_->StatKey(ns_, "/memories/d.md")->id, c);
}

TEST_F(StoreTest, DataVersionChangesOnOtherConnectionsCommit) {
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  auto v1 = store_->DataVersion();
  ASSERT_TRUE(v1.has_value());
  auto ons = (*other)->Namespace("default");
  ASSERT_TRUE((*other)->PutFile(*ons, "/memories/z", "z").has_value());
  EXPECT_NE(*store_->DataVersion(), *v1);
  EXPECT_EQ(Read("/memories/z"), "z");
}

TEST_F(StoreTest, ConcurrentEditsFromThreadsAndProcessesLoseNothing) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/log.txt", "").has_value());
  constexpr int kProcs = 3, kThreads = 2, kEdits = 40;
  auto append = [](Store* s, NsId ns, const std::string& line) {
    for (;;) {
      auto w = s->EditFile(ns, "/memories/log.txt", [&](std::string_view cur, std::string* next) {
        *next = std::string(cur) + line + "\n";
        return Status::Ok();
      });
      if (w.has_value()) return true;
      ADD_FAILURE() << w.error().ToString();
      return false;
    }
  };
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      auto s = Store::Open(path_);
      if (!s.has_value()) _exit(3);
      auto ns = (*s)->Namespace("default");
      std::vector<std::thread> threads;
      bool ok = true;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          for (int i = 0; i < kEdits; ++i) {
            if (!append(s->get(), *ns, "p" + std::to_string(p) + "t" + std::to_string(t) + "i" +
                                           std::to_string(i))) {
              ok = false;
            }
          }
        });
      }
      for (auto& th : threads) th.join();
      _exit(ok ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string body = Read("/memories/log.txt");
  EXPECT_EQ(static_cast<int>(std::count(body.begin(), body.end(), '\n')),
            kProcs * kThreads * kEdits);
  EXPECT_EQ(static_cast<int>(Hist("/memories/log.txt").size()), kProcs * kThreads * kEdits + 1);
}

TEST_F(StoreTest, OpenRejectsForeignFiles) {
  std::string junk = dir_.File("junk.db");
  {
    std::ofstream out(junk, std::ios::binary);
    for (int i = 0; i < 4096; ++i) out.put(static_cast<char>(i * 7 + 3));
  }
  auto s = Store::Open(junk);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kCorruption);
}

// A body row lost to damage of the file is reported as corruption, never
// read as an empty body (the reads join bodies with LEFT JOIN).
// A reader that finds the file another process is creating still empty
// waits for the store instead of calling it "not an areev store"; a file that
// stays empty is still refused.
TEST_F(StoreTest, AReaderWaitsForAStoreBeingCreated) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "a\n").has_value());
  store_.reset();  // checkpoints: the file alone is the whole store
  const std::string made = dir_.File("made.db");
  std::filesystem::copy_file(path_, made);
  const std::string fresh = dir_.File("fresh.db");
  { std::ofstream touch(fresh); }
  std::thread creator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::filesystem::copy_file(made, fresh, std::filesystem::copy_options::overwrite_existing);
  });
  Options read_only;
  read_only.create_if_missing = false;
  auto opened = Store::Open(fresh, read_only);
  creator.join();
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  auto ns = (*opened)->FindNamespace("default");
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ(*(*opened)->ReadFile(*ns, "/memories/a.md"), "a\n");
  const std::string empty = dir_.File("empty.db");
  { std::ofstream touch(empty); }
  EXPECT_EQ(Store::Open(empty, read_only).error().code(), StatusCode::kCorruption);
}

TEST_F(StoreTest, AMissingBodyIsCorruptionNotAnEmptyFile) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/x.md", "precious\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/empty.md", "").has_value());
  FactInput fact;
  fact.subject = "alice";
  fact.relation = "prefers";
  fact.object = "tea";
  fact.context = "said so on Monday";
  ASSERT_TRUE(store_->AddFact(ns_, fact).has_value());
  ASSERT_EQ(Read("/memories/x.md"), "precious\n");  // cached, then dropped by the change below
  {
    sqlite3* raw = nullptr;  // another program damaging the file
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    sqlite3_busy_timeout(raw, 5000);
    EXPECT_EQ(sqlite3_exec(raw,
                           "DELETE FROM bodies WHERE id IN (SELECT body_id FROM nodes WHERE key = "
                           "'/memories/x.md' UNION SELECT body_id FROM grains WHERE subject = "
                           "'alice')",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(raw);
    EXPECT_EQ(sqlite3_changes(raw), 2);
    sqlite3_close(raw);
  }
  auto read = store_->ReadFile(ns_, "/memories/x.md");
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kCorruption);
  auto facts = store_->Recall(ns_, "alice", "", false);
  ASSERT_FALSE(facts.has_value());
  EXPECT_EQ(facts.error().code(), StatusCode::kCorruption);
  EXPECT_EQ(Read("/memories/empty.md"), "");  // a real empty file still reads
}

// Names SQLite reads as something other than a file would acknowledge
// writes and keep nothing; a name starting with "file:" is a file's name.
TEST_F(StoreTest, OpenTakesEveryPathAsAFile) {
  for (const char* path : {"", ":memory:"}) {
    auto s = Store::Open(path);
    ASSERT_FALSE(s.has_value()) << path;
    EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument) << path;
  }
  {
    struct InDir {  // back to the old working directory however the block ends
      std::filesystem::path old = std::filesystem::current_path();
      explicit InDir(const std::filesystem::path& dir) { std::filesystem::current_path(dir); }
      ~InDir() { std::filesystem::current_path(old); }
    } in_dir(dir_.path());
    auto s = Store::Open("file:u.db?mode=memory");
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    auto ns = (*s)->Namespace("default");
    ASSERT_TRUE(ns.has_value());
    ASSERT_TRUE((*s)->PutFile(*ns, "/memories/kept.md", "kept\n").has_value());
  }
  EXPECT_TRUE(std::filesystem::exists(dir_.File("file:u.db?mode=memory")));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("u.db")));
  auto again = Store::Open(dir_.File("file:u.db?mode=memory"));
  ASSERT_TRUE(again.has_value());
  auto ns = (*again)->Namespace("default");
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ(*(*again)->ReadFile(*ns, "/memories/kept.md"), "kept\n");
}

}  // namespace
}  // namespace grainstore
