// Aborting a FUSE connection through the kernel's fusectl filesystem
// (/sys/fs/fuse/connections/N/abort): every request waiting for the daemon,
// and every later one, fails at once with ECONNABORTED. That frees the
// processes stuck on a daemon that cannot answer: one stopped, or one killed
// while a thread of its waits in the kernel (docs/fusefs.md, "Crash
// safety"). Needs root.
#ifndef FUSEFS_CONNECTION_ABORT_H_
#define FUSEFS_CONNECTION_ABORT_H_

#include <string>

#include "mount_table.h"

namespace fusefs {

// The name of `mount`'s connection under /sys/fs/fuse/connections: the
// kernel's number for its device, (major << 20) | minor.
std::string ConnectionName(const MountEntry& mount);

// Aborts the connection of the FUSE mount `mount`, mounting fusectl on
// /sys/fs/fuse/connections first if it is not there. False, with the reason
// in `*error`, when that cannot be done.
bool AbortConnection(const MountEntry& mount, std::string* error);

}  // namespace fusefs

#endif  // FUSEFS_CONNECTION_ABORT_H_
