// The daemon's multi-threaded request loop, in place of libfuse's. There,
// every idle worker sleeps in read(2) on /dev/fuse and the kernel wakes one
// for each request; on a virtual machine that sleep and wake-up is a large
// share of a small request's cost (docs/performance.md, "A daemon thread
// that does not sleep between requests"). Here one worker at a time reads
// the device: after answering a request it looks for the next one for a
// short while (the fd is non-blocking, and it yields the CPU between looks)
// before it sleeps in poll(2). The other workers are parked where no
// request wakes them, and a second reader is brought in only when requests
// queue:
// - the reader found the next request already there after answering one,
//   three times in a row (parallel clients: git's threads stat every file
//   at once; a single client leaves one there now and then);
// - every reader has been in a handler for `stuck_after` while a request
//   waits (a save behind another process's write lock, a page the kernel
//   drops while a read of it waits for the daemon). The calling thread
//   watches for this, every millisecond while requests come.
// A reader that finishes a handler while another worker reads parks again.
#ifndef FUSEFS_REQUEST_LOOP_H_
#define FUSEFS_REQUEST_LOOP_H_

#include <fuse_lowlevel.h>

#include <chrono>

namespace fusefs {

struct RequestLoopOptions {
  unsigned max_workers = 16;  // started when needed, kept until the loop ends
  // How long a reader that answered a request looks for the next one
  // before it sleeps; zero: never.
  std::chrono::microseconds look_for{200};
  // How long every reader must have been in a handler, with a request
  // waiting, before another worker reads.
  std::chrono::microseconds stuck_after{1000};
};

// Serves `se` until the session exits: the kernel ends the connection (an
// unmount), or fuse_session_exit is called, after which a signal to the
// calling thread ends its wait (StopSignals). Requests being handled then
// are answered before it returns; every worker is joined. Returns 0, or a
// negative errno when /dev/fuse could not be read or waited on (an aborted
// connection: -ECONNABORTED), as fuse_session_loop_mt does.
int RunRequestLoop(fuse_session* se, const RequestLoopOptions& options);

}  // namespace fusefs

#endif  // FUSEFS_REQUEST_LOOP_H_
