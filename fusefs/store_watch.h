// Tells the coherence path at once when another process writes the store,
// rather than at the poller's next pass. Between a memory-tool edit and that
// pass (up to the poll interval, 100 ms), `stat` of the edited file was
// answered from the kernel's attribute cache with the old size and time:
// the kernel asks the daemon only when its cache is dropped, so the
// synchronous check of getattr never ran.
//
// Every commit appends to the store's `-wal` file, which raises an inotify
// event on its directory. The watch's thread calls back 2 ms after the first
// event of a burst on the store's files: a writer publishes its commit in
// the WAL index (shared memory, which raises no event) just after its last
// write to the `-wal`, and one look then serves every write of the burst.
// Writers the kernel does not report (another host), and a commit published
// later than that, are still found by the poller.
#ifndef FUSEFS_STORE_WATCH_H_
#define FUSEFS_STORE_WATCH_H_

#include <functional>
#include <string>
#include <thread>

namespace fusefs {

class StoreWatch {
 public:
  StoreWatch() = default;
  StoreWatch(const StoreWatch&) = delete;
  StoreWatch& operator=(const StoreWatch&) = delete;
  ~StoreWatch();

  // Watches the store at `db_path` (its directory, for writes to the file
  // and its `-wal`), calling `changed` on a thread of its own. False, with
  // `*error` set and nothing watched, when inotify cannot watch it.
  bool Start(const std::string& db_path, std::function<void()> changed, std::string* error);
  // Ends the thread; `changed` is not called once Stop returns.
  void Stop();

 private:
  void Run();
  // Reads every queued event; whether one was a write to the store's files.
  bool DrainEvents();

  int inotify_fd_ = -1;
  int stop_fd_ = -1;
  std::string file_name_;  // the store's file name, without its directory
  std::function<void()> changed_;
  std::thread thread_;
};

}  // namespace fusefs

#endif  // FUSEFS_STORE_WATCH_H_
