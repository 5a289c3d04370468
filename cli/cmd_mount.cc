// `areev mount` and `areev umount`: the FUSE view of one namespace.
#include <memory>
#include <string>
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
#endif

int RunMountCmd(const GlobalOptions& global, const MountArgs& args) {
#ifdef AREEV_HAVE_FUSE
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

int RunUmountCmd(const std::string& mountpoint) {
#ifdef AREEV_HAVE_FUSE
  return fusefs::Unmount(mountpoint);
#else
  (void)mountpoint;
  return Fail(kExitFailed, "umount: this areev was built without FUSE support");
#endif
}

}  // namespace

void AddMountCommands(CLI::App& app, const GlobalOptions& global,
                      std::vector<Command>* out) {
  auto m = std::make_shared<MountArgs>();
  CLI::App* mount =
      app.add_subcommand("mount", "Mount a namespace's /memories through FUSE");
  mount->add_option("mountpoint", m->mountpoint, "Empty directory to mount on")
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

  auto mp = std::make_shared<std::string>();
  CLI::App* umount = app.add_subcommand("umount", "Unmount a mountpoint");
  umount->add_option("mountpoint", *mp, "Mounted directory")->required();
  out->push_back({umount, [mp] { return RunUmountCmd(*mp); }});
}

}  // namespace cli
