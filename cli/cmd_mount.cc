// `areev mount` and `areev umount`: the FUSE view of one namespace.
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#ifdef AREEV_HAVE_FUSE
#include "fusefs/mount.h"
#endif

namespace cli {
namespace {

struct MountArgs {
  std::string mountpoint;
  bool foreground = false;
  bool single_threaded = false;
  bool debug = false;
  std::vector<std::string> options;  // each item may hold "a,b,c"
};

#ifdef AREEV_HAVE_FUSE
std::vector<std::string> SplitOptions(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const auto& item : raw) {
    std::size_t start = 0;
    while (start <= item.size()) {
      std::size_t comma = item.find(',', start);
      if (comma == std::string::npos) comma = item.size();
      if (comma > start) out.push_back(item.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

// A file's body passes through several large buffers in the daemon (the open
// file's data, the body bound into SQL, the next append's base), and on a
// virtual machine each first touch of a 4 KiB page can cost ~15 µs: a 64 MiB
// write spent most of its time in page faults (docs/performance.md). glibc's
// malloc advises transparent huge pages for the memory it maps when the
// glibc.malloc.hugetlb tunable is 1, and tunables are read only when a
// process starts, so the mount starts itself once more with it set. It does
// not when the environment already names the tunable (the user's choice, or
// this process after that start) or when valgrind runs it (its own malloc,
// and an exec would leave valgrind behind). A failed exec changes nothing.
// The words this process was started with, from /proc/self/cmdline: the
// same argv, also after the restart below, which passes them on unchanged.
std::vector<std::string> CommandLineWords() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string cmdline{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> words;
  for (std::size_t start = 0; start < cmdline.size();) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    words.emplace_back(cmdline, start, end - start);
    start = end + 1;
  }
  return words;
}

void RestartWithHugePageMalloc(std::vector<std::string> words) {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool had_tunables = tunables != nullptr;
  const std::string current = had_tunables ? tunables : "";
  if (current.find("glibc.malloc.hugetlb") != std::string::npos) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::string_view(preload).find("vgpreload") != std::string_view::npos) {
    return;
  }
  if (words.empty()) return;
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string value =
      current.empty() ? "glibc.malloc.hugetlb=1" : current + ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv.data());
  // Still here: run without the tunable, and leave the environment as it was.
  if (had_tunables) {
    setenv("GLIBC_TUNABLES", current.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
}

// Names the process after the command the user ran (argv[0]'s last part),
// as ps, pgrep and top show it: an exec of /proc/self/exe names it "exe".
void NameProcessAsInvoked(const std::vector<std::string>& words) {
  if (words.empty()) return;
  const std::string name = std::filesystem::path(words.front()).filename().string();
  if (!name.empty()) (void)prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);  // kept to 15 bytes
}
#endif

int RunMountCmd(const GlobalOptions& global, const MountArgs& args) {
#ifdef AREEV_HAVE_FUSE
  // Refused before the store is opened, as by every other command.
  if (int code = kExitOk; !CheckStoreOptions(global, &code)) return code;
  const std::vector<std::string> words = CommandLineWords();
  RestartWithHugePageMalloc(words);
  NameProcessAsInvoked(words);
  fusefs::MountOptions options;
  options.db_path = global.db;
  options.ns = global.ns;
  options.mountpoint = args.mountpoint;
  options.foreground = args.foreground || args.debug;
  options.single_threaded = args.single_threaded;
  options.debug = args.debug;
  options.fuse_options = SplitOptions(args.options);
  options.durability = global.durable ? grainstore::Durability::kFull
                                      : grainstore::Durability::kNormal;
  return fusefs::RunMount(options);
#else
  (void)global;
  (void)args;
  return Fail(kExitFailed, "mount: this areev was built without FUSE support");
#endif
}

int RunUmountCmd(const std::string& mountpoint, bool abort) {
#ifdef AREEV_HAVE_FUSE
  // An empty name is no path ("umount:  is not mounted" said nothing).
  if (mountpoint.empty()) return Fail(kExitUsage, "umount: the mountpoint must not be empty");
  std::string error;
  std::string note;
  const int code = fusefs::Unmount(mountpoint, abort, &error, &note);
  if (code == 0 && !note.empty()) return Fail(0, "umount: " + note);
  return code == 0 ? code : Fail(code, "umount: " + error);
#else
  (void)mountpoint;
  (void)abort;
  return Fail(kExitFailed, "umount: this areev was built without FUSE support");
#endif
}

}  // namespace

void AddMountCommands(CLI::App& app, const GlobalOptions& global,
                      std::vector<Command>* out) {
  auto m = std::make_shared<MountArgs>();
  CLI::App* mount =
      app.add_subcommand("mount", "Mount a namespace's /memories through FUSE");
  mount->add_option("mountpoint", m->mountpoint, "Directory to mount on")
      ->required();
  mount->add_flag("-f,--foreground", m->foreground, "Stay in the foreground");
  mount->add_flag("-s", m->single_threaded, "Single-threaded (debugging)");
  mount->add_flag("-d,--debug", m->debug,
                  "libfuse request tracing to stderr (implies -f)");
  mount
      ->add_option("-o", m->options,
                   "FUSE options, comma-separated (repeatable)")
      ->allow_extra_args(false);
  out->push_back({mount, [&global, m] { return RunMountCmd(global, *m); }});

  struct UmountArgs {
    std::string mountpoint;
    bool abort = false;
  };
  auto u = std::make_shared<UmountArgs>();
  CLI::App* umount = app.add_subcommand("umount", "Unmount a mountpoint");
  umount->add_option("mountpoint", u->mountpoint, "Mounted directory")->required();
  umount->add_flag("--abort", u->abort,
                   "Abort the mount's FUSE connection first (root): frees processes stuck on "
                   "a daemon that cannot answer");
  out->push_back({umount, [u] { return RunUmountCmd(u->mountpoint, u->abort); }});
}

}  // namespace cli
