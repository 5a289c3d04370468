// fusefs: mounts one namespace's /memories as a real directory through FUSE
// (low-level libfuse 3 API). Every sealed save becomes a grain version; a
// hidden, read-only .history/ exposes old versions. See docs/fusefs.md.
#ifndef FUSEFS_MOUNT_H_
#define FUSEFS_MOUNT_H_

#include <string>
#include <vector>

#include "grainstore/options.h"

namespace fusefs {

struct MountOptions {
  std::string db_path;          // store file (created if missing)
  std::string ns = "default";   // namespace shown at the mount root
  std::string mountpoint;
  bool foreground = false;      // false: daemonize after the mount is up
  bool single_threaded = false; // -s: one FUSE worker thread (debugging)
  bool debug = false;           // -d: libfuse request tracing to stderr
  std::vector<std::string> fuse_options;  // from -o a,b,c (e.g. allow_other)
  grainstore::Durability durability = grainstore::Durability::kNormal;
};

// Mounts and serves until unmounted or signalled. Returns a process exit code:
// 0 after a clean unmount, 1 on a runtime failure, 2 on bad options. Errors are
// logged to stderr (foreground) or syslog (daemon).
int RunMount(const MountOptions& options);

// Unmounts a FUSE mountpoint (fusermount3 -u, lazy as a last resort).
// Returns 0 on success, else 1 with the reason in `error` (nothing is
// mounted there, not a FUSE mount, or it stays busy). After a lazy unmount
// `note` says so: the daemon serves open files until the last one closes.
// With `abort` (root only), the mount's FUSE connection is aborted first:
// requests waiting for the daemon fail at once, which frees processes stuck
// on a daemon that cannot answer; writes still in the kernel's cache that
// the daemon was not sent are lost.
int Unmount(const std::string& mountpoint, bool abort, std::string* error, std::string* note);

}  // namespace fusefs

#endif  // FUSEFS_MOUNT_H_
