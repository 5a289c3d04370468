// RunMount / Unmount: option handling, the fuse_session lifecycle (new, mount,
// daemonize, loop, unmount) and the operation table.
#include "fusefs/mount.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "coherence.h"
#include "connection_abort.h"
#include "filesystem.h"
#include "grainstore/store.h"
#include "log.h"
#include "mount_table.h"
#include "ops.h"
#include "request_loop.h"
#include "stop_signals.h"

extern char** environ;

namespace fusefs {
namespace {

// The type the mount table shows for an areev mount (subtype=areev).
constexpr char kAreevMountType[] = "fuse.areev";

constexpr int kPollIntervalMs = 100;

// RAII owners for libfuse objects.
struct ArgsDeleter {
  void operator()(fuse_args* args) const {
    fuse_opt_free_args(args);
    delete args;
  }
};
struct SessionDeleter {
  void operator()(fuse_session* se) const { fuse_session_destroy(se); }
};

struct OpenedStore {
  std::unique_ptr<grainstore::Store> store;
  grainstore::NsId ns = 0;
  grainstore::NodeId root = 0;
};

// Opens the store and resolves the namespace root. Returns an exit code.
int OpenStore(const MountOptions& options, OpenedStore* out) {
  grainstore::Options store_options;
  store_options.durability = options.durability;
  auto store = grainstore::Store::Open(options.db_path, store_options);
  if (!store) {
    const grainstore::Status& error = store.error();
    Log(LogLevel::kError, "cannot open store {}: {}", options.db_path,
        error.message().empty() ? error.ToString() : error.message());
    // The CLI's codes (docs/cli.md): a bad argument is usage, a lock held
    // past the busy timeout a failed operation, anything else a store that
    // cannot be opened.
    return error.code() == grainstore::StatusCode::kInvalidArgument ? 2
           : error.code() == grainstore::StatusCode::kBusy          ? 1
                                                                   : 3;
  }
  if ((*store)->read_only()) {
    // Every save through the mount is a write; a read-only mount would also
    // go stale at the owner's next write (a snapshot cannot follow it).
    if (std::string why = (*store)->read_only_reason(); !why.empty()) {
      Log(LogLevel::kError, "cannot mount {}: the mount writes every save into the store, but {}",
          options.db_path, why);
      return 1;
    }
    Log(LogLevel::kError,
        "cannot mount {}: this user may only read the store (the mount writes every save "
        "into it): write access to the file and its directory is needed; `areev cat`, "
        "`history` and `memtool view` read it as it is",
        options.db_path);
    return 1;
  }
  auto ns = (*store)->Namespace(options.ns);
  if (!ns) {
    Log(LogLevel::kError, "namespace {}: {}", options.ns, ns.error().ToString());
    return ns.error().code() == grainstore::StatusCode::kInvalidArgument ? 2 : 1;
  }
  auto root = (*store)->RootId(*ns);
  if (!root) {
    Log(LogLevel::kError, "namespace root: {}", root.error().ToString());
    return 1;
  }
  out->store = std::move(store).value();
  out->ns = *ns;
  out->root = *root;
  return 0;
}

// Options this daemon consumes itself instead of handing them to libfuse.
bool TakeOwnOption(const std::string& opt, Filesystem* fs) {
  if (opt == "writeback_cache" || opt == "writeback") {
    fs->set_want_writeback(true);
    return true;
  }
  if (opt == "no_writeback_cache") {
    fs->set_want_writeback(false);
    return true;
  }
  return false;
}

std::unique_ptr<fuse_args, ArgsDeleter> BuildArgs(const MountOptions& options, Filesystem* fs) {
  std::unique_ptr<fuse_args, ArgsDeleter> args(new fuse_args(FUSE_ARGS_INIT(0, nullptr)));
  fuse_opt_add_arg(args.get(), "areev");
  fuse_opt_add_arg(args.get(), "-o");
  fuse_opt_add_arg(args.get(),
                   "default_permissions,auto_unmount,nosuid,nodev,fsname=areev,subtype=areev");
  static_assert(std::string_view(kAreevMountType) == "fuse.areev", "subtype=areev above");
  for (const std::string& opt : options.fuse_options) {
    if (TakeOwnOption(opt, fs)) continue;
    fuse_opt_add_arg(args.get(), "-o");
    fuse_opt_add_arg(args.get(), opt.c_str());
  }
  if (options.debug) fuse_opt_add_arg(args.get(), "-d");
  return args;
}

int Loop(fuse_session* se, const MountOptions& options) {
  if (options.single_threaded) return fuse_session_loop(se);
  return RunRequestLoop(se, RequestLoopOptions{});
}

// Runs one command, returning its exit status (-1 if it could not run).
// SIGCHLD is set to its default meanwhile: a parent that ignores it passes
// that on through exec, and the kernel then reaps the child itself, so
// waitpid() could never report it (ECHILD).
int RunCommand(const std::vector<std::string>& argv) {
  std::vector<char*> raw;
  for (const std::string& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
  raw.push_back(nullptr);
  struct sigaction dfl = {};
  struct sigaction old = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &old);
  int result = -1;
  pid_t pid;
  if (posix_spawnp(&pid, raw[0], nullptr, nullptr, raw.data(), environ) == 0) {
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (waited == pid && WIFEXITED(status)) result = WEXITSTATUS(status);
  }
  sigaction(SIGCHLD, &old, nullptr);
  return result;
}

// An exclusive flock on the mountpoint directory (as it is before the
// mount), held from the check for another areev mount until this one is up.
class MountpointLock {
 public:
  explicit MountpointLock(const std::string& mountpoint)
      : fd_(open(mountpoint.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0) {
      while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  MountpointLock(const MountpointLock&) = delete;
  MountpointLock& operator=(const MountpointLock&) = delete;
  ~MountpointLock() { Release(); }
  void Release() {
    if (fd_ >= 0) close(fd_);  // before the daemon forks: the lock ends here
    fd_ = -1;
  }

 private:
  int fd_;
};

// Whether the store would be reached through a mount on `mountpoint`: the
// mountpoint is the store file, its WAL or shared-memory index, or one of the
// directories above them, symlinks resolved.
bool StoreLiesUnder(const std::string& mountpoint, const std::string& db) {
  std::error_code ec;
  const std::filesystem::path mp = std::filesystem::weakly_canonical(mountpoint, ec);
  if (ec) return false;  // fuse_session_mount reports a mountpoint it cannot use
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::filesystem::path file = std::filesystem::weakly_canonical(db + suffix, ec);
    if (ec) return false;
    auto [in_mp, in_file] = std::mismatch(mp.begin(), mp.end(), file.begin(), file.end());
    (void)in_file;
    if (in_mp == mp.end()) return true;
  }
  return false;
}

}  // namespace

fuse_lowlevel_ops BuildOperations() {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  ops.destroy = OpDestroy;
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.forget_multi = OpForgetMulti;
  ops.getattr = OpGetattr;
  ops.setattr = OpSetattr;
  ops.readlink = OpReadlink;
  ops.mknod = OpMknod;
  ops.mkdir = OpMkdir;
  ops.unlink = OpUnlink;
  ops.rmdir = OpRmdir;
  ops.symlink = OpSymlink;
  ops.rename = OpRename;
  ops.link = OpLink;
  ops.open = OpOpen;
  ops.read = OpRead;
  ops.write = OpWrite;
  ops.flush = OpFlush;
  ops.release = OpRelease;
  ops.fsync = OpFsync;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.readdirplus = OpReaddirplus;
  ops.releasedir = OpReleasedir;
  ops.fsyncdir = OpFsyncdir;
  ops.statfs = OpStatfs;
  ops.create = OpCreate;
  ops.fallocate = OpFallocate;
  // No xattr handlers: libfuse answers ENOSYS and the kernel stops asking.
  // No lock handlers: the kernel enforces POSIX and flock locks locally.
  return ops;
}

namespace {

// A dead mount of areev's at `mountpoint` (its daemon is gone, and with it
// the fusermount3 that would have removed it): detached, so that the mount
// asked for can take its place. Another program's dead mount is left alone.
bool ClearDeadMount(const std::string& mountpoint) {
  const std::string resolved = ResolveMountPath(mountpoint);
  if (MountAt(resolved).type != "fuse.areev") return false;
  if (RunCommand({"fusermount3", "-u", "-z", "-q", resolved}) != 0) return false;
  Log(LogLevel::kWarning, "a mount of areev's whose daemon is gone was still on {}; removed it",
      mountpoint);
  return true;
}

// The mount nearest above `path`, or on it, that is a FUSE mount (the dead
// one a stat of `path` met with ENOTCONN); `path` itself if none is.
std::string NearestFuseMount(const std::string& path) {
  for (std::filesystem::path p(path);; p = p.parent_path()) {
    if (MountAt(p.string()).type.starts_with("fuse")) return p.string();
    if (!p.has_relative_path()) return path;
  }
}

}  // namespace

int RunMount(const MountOptions& given) {
  SetLogVerbose(given.debug);
  if (given.mountpoint.empty() || given.db_path.empty()) {
    Log(LogLevel::kError, "a mountpoint and a store path are required");
    return 2;
  }
  // fuse_daemonize() moves the process to "/", after which the store is
  // opened again and the mountpoint unmounted: relative paths must name the
  // same files there as here.
  MountOptions options = given;
  for (std::string* path : {&options.db_path, &options.mountpoint}) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(*path, ec);
    if (ec) {
      Log(LogLevel::kError, "cannot resolve {}: {}", *path, ec.message());
      return 2;
    }
    *path = absolute.lexically_normal().string();
  }
  if (StoreLiesUnder(options.mountpoint, options.db_path)) {
    Log(LogLevel::kError,
        "cannot mount on {}: the store {} lies under it, and the daemon would wait on "
        "itself to reach it",
        options.mountpoint, options.db_path);
    return 2;
  }
  // Checked before the store is opened, so a mistyped mountpoint leaves no
  // new store file behind.
  const auto stat_error = [&] {
    struct stat st{};
    return stat(options.mountpoint.c_str(), &st) != 0 ? errno
           : S_ISDIR(st.st_mode)                       ? 0
                                                       : ENOTDIR;
  };
  int stat_err = stat_error();
  if (stat_err == ENOTCONN && ClearDeadMount(options.mountpoint)) stat_err = stat_error();
  if (struct stat link{}; stat_err == ENOENT && lstat(options.mountpoint.c_str(), &link) == 0) {
    Log(LogLevel::kError, "cannot mount on {}: it is a symlink to a directory that does not exist",
        options.mountpoint);
    return 1;
  }
  if (stat_err == ENOENT) {
    Log(LogLevel::kError, "cannot mount on {}: no such directory (create it first: mkdir -p {})",
        options.mountpoint, options.mountpoint);
    return 1;
  }
  if (stat_err == ENOTCONN) {
    if (const std::string dead = NearestFuseMount(options.mountpoint);
        dead != options.mountpoint) {
      Log(LogLevel::kError, "cannot mount on {}: it lies under {}, a mount whose daemon is "
          "gone; remove that first (areev umount {})", options.mountpoint, dead, dead);
      return 1;
    }
    Log(LogLevel::kError, "cannot mount on {}: a mount whose daemon is gone is still there; "
        "remove it first (areev umount {})", options.mountpoint, options.mountpoint);
    return 1;
  }
  if (stat_err != 0) {
    Log(LogLevel::kError, "cannot mount on {}: {}", options.mountpoint, std::strerror(stat_err));
    return 1;
  }
  // fusermount3 mounts on no symlink: a link to a directory (`link` or, as
  // completion writes it, `link/`) means that directory, as `cd` takes it.
  {
    std::error_code ec;
    std::filesystem::path real = std::filesystem::canonical(options.mountpoint, ec);
    if (!ec) options.mountpoint = real.string();
  }
  // Two mounts started at once on one mountpoint: the second waits here
  // until the first is mounted, then finds it below.
  MountpointLock lock(options.mountpoint);
  if (MountAt(options.mountpoint).type == kAreevMountType) {
    // libfuse would stack a second daemon on the first, and a user would
    // edit through whichever is on top.
    Log(LogLevel::kError, "cannot mount on {}: an areev mount is already there; unmount it "
        "first (areev umount {})", options.mountpoint, options.mountpoint);
    return 1;
  }
  // libfuse parses the -o options here: a bad one is refused before the
  // store is opened, so it creates no store file.
  Filesystem fs;
  auto args = BuildArgs(options, &fs);
  const fuse_lowlevel_ops ops = BuildOperations();
  std::unique_ptr<fuse_session, SessionDeleter> se(
      fuse_session_new(args.get(), &ops, sizeof(ops), &fs));
  if (!se) {  // libfuse printed why (an unknown -o option, a value it cannot read)
    Log(LogLevel::kError, "cannot mount {}: libfuse refused its options (its reason is above)",
        options.mountpoint);
    return 2;
  }

  // An existing store is opened first, so that one this user cannot use is
  // refused before anything is mounted. A new one is created only once the
  // mount stands: a mount that fusermount3 or the kernel refuses (no access
  // to the mountpoint or to /dev/fuse, allow_other not allowed) leaves no
  // empty store behind.
  struct stat db_st{};
  const bool new_store = lstat(options.db_path.c_str(), &db_st) != 0 && errno == ENOENT;
  OpenedStore opened;
  // Opens the store before the daemon forks: no SQLite handle may cross
  // fork(), so a daemon opens it again after.
  const auto open_before_fork = [&] {
    const int rc = OpenStore(options, &opened);
    if (!options.foreground) opened.store.reset();
    return rc;
  };
  if (!new_store) {
    if (int rc = open_before_fork(); rc != 0) return rc;
  }
  std::string signal_error;
  std::unique_ptr<StopSignals> signals = StopSignals::Install(se.get(), &signal_error);
  if (!signals) {
    Log(LogLevel::kError, "{}", signal_error);
    return 1;
  }
  if (fuse_session_mount(se.get(), options.mountpoint.c_str()) != 0) {
    // libfuse (or fusermount3) said why on stderr, just before.
    Log(LogLevel::kError, "cannot mount {}: libfuse refused it (its reason is above)",
        options.mountpoint);
    return 1;
  }
  if (new_store) {
    if (int rc = open_before_fork(); rc != 0) {
      fuse_session_unmount(se.get());
      return rc;
    }
  }
  lock.Release();
  fuse_daemonize(options.foreground ? 1 : 0);
  if (!options.foreground) {
    LogToSyslog();
    if (OpenStore(options, &opened) != 0) {
      fuse_session_unmount(se.get());
      return 1;
    }
  }
  grainstore::Status attached =
      fs.Attach(std::move(opened.store), opened.ns, opened.root, options.db_path);
  if (!attached.ok()) {
    Log(LogLevel::kError, "cannot load the namespace root: {}", attached.ToString());
    fuse_session_unmount(se.get());
    return 1;
  }
  fs.set_session(se.get());
  fs.coherence().Start(kPollIntervalMs);
  // A stop signal stops the poller while the workers still answer (a drop
  // of a name it is sending may wait for a lookup), then ends the loop.
  // In writeback mode the kernel may still hold pages written to open
  // files; it hands them over while the workers answer.
  signals->Start([&fs] {
    fs.coherence().Stop();
    fs.FetchKernelWrites();
  });
  int loop = Loop(se.get(), options);
  signals->Finish();
  fs.coherence().Stop();
  fs.SealAll();
  fuse_session_unmount(se.get());
  if (loop < 0) {
    Log(LogLevel::kError, "session loop failed: {}", loop);
    return 1;
  }
  return 0;  // unmounted, or stopped by SIGINT/SIGTERM/SIGHUP
}

int Unmount(const std::string& given, bool abort, std::string* error, std::string* note) {
  const std::string mountpoint = ResolveMountPath(given);  // fusermount3 follows no link
  const MountEntry mount = MountAt(mountpoint);
  if (mount.type.empty()) {
    *error = fmt::format("{} is not mounted", given);
    return 1;
  }
  if (!mount.type.starts_with("fuse")) {
    *error = fmt::format("{} is not a FUSE mount (its type is {})", given, mount.type);
    return 1;
  }
  const uid_t self = getuid();
  if (self != 0 && mount.owner && *mount.owner != self) {
    // fusermount3 would refuse with "entry ... not found in /etc/mtab".
    *error = fmt::format("cannot unmount {}: another user (uid {}) mounted it; only that user "
                         "or root may unmount it", given, *mount.owner);
    return 1;
  }
  if (abort) {
    if (geteuid() != 0) {
      *error = fmt::format("cannot abort the connection of {}: that needs root (it writes "
                           "/sys/fs/fuse/connections/{}/abort)", given, ConnectionName(mount));
      return 1;
    }
    std::string why;
    if (!AbortConnection(mount, &why)) {
      *error = fmt::format("cannot abort the connection of {}: {}", given, why);
      return 1;
    }
    // A daemon that can run takes its mount down itself once its connection
    // is gone.
    for (int wait = 0; wait < 20 && !MountAt(mountpoint).type.empty(); ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (MountAt(mountpoint).type.empty()) return 0;
  }
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (RunCommand({"fusermount3", "-u", "-q", mountpoint}) == 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // EBUSY: a user is leaving
  }
  // The last try speaks: fusermount3 says why on stderr (not the owner, ...).
  if (RunCommand({"fusermount3", "-u", "-z", mountpoint}) == 0) {
    *note = fmt::format(
        "{} was busy and is detached lazily: files still open there are served, and "
        "saved, until they close",
        given);
    return 0;
  }
  *error = fmt::format("cannot unmount {}: fusermount3 -u failed", mountpoint);
  return 1;
}

}  // namespace fusefs
