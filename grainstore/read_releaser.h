// Ends a Store's held read (see Db, "Held reads") once it has sat idle for
// kIdle, or has been open for kMaxAge. A held read makes the next read free
// of lock calls while nothing commits, but it also keeps every other
// connection's checkpoint from copying frames committed after it, and the
// WAL from restarting: a process that reads and then goes quiet must not pin
// the WAL for long, and one that reads without pause must still leave other
// writers moments to restart it (a read that begins once everything is
// copied into the database does not stand in the way).
//
// The thread starts with the first hold and sleeps without a deadline while
// no read is held, so an idle Store costs no wake-ups. A forked child, which
// has a copy of the Worker but not its thread, holds no reads.
#ifndef GRAINSTORE_READ_RELEASER_H_
#define GRAINSTORE_READ_RELEASER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "db.h"

namespace grainstore {

class ReadReleaser {
 public:
  static constexpr std::chrono::milliseconds kIdle{2};
  static constexpr std::chrono::milliseconds kMaxAge{100};

  // `store_mu` serialises every use of `db`; both must outlive this object.
  ReadReleaser(std::mutex* store_mu, Db* db) : store_mu_(store_mu), db_(db) {}
  ReadReleaser(const ReadReleaser&) = delete;
  ReadReleaser& operator=(const ReadReleaser&) = delete;
  ~ReadReleaser();  // stops the thread, if it runs, and waits for it

  // Installs OnHold as `db`'s hold hook.
  void Attach();

 private:
  struct Worker {
    unsigned forks = 0;  // ProcessForkCount() in the process the thread runs in
    std::mutex mu;       // taken after store_mu_, never before it
    std::condition_variable cv;
    // A read is held and the thread knows. Written under both mutexes, so
    // either one is enough to read it.
    std::atomic<bool> watching{false};
    bool stop = false;  // guarded by mu
    std::thread thread;
  };

  // Db's hold hook, called with *store_mu_ held: wakes the thread when it
  // sleeps without a deadline. False when no thread can end the hold.
  static bool OnHold(void* self);
  void Run(Worker* w);
  // With *store_mu_ held: ends the held read once idle for kIdle or open for
  // kMaxAge. True, with `next` set to when to look again, while a read stays
  // held.
  bool EndIfDue(std::chrono::steady_clock::time_point* next);

  std::mutex* const store_mu_;
  Db* const db_;
  std::unique_ptr<Worker> worker_;  // touched under *store_mu_
  bool no_thread_ = false;          // a thread could not be started
};

}  // namespace grainstore

#endif  // GRAINSTORE_READ_RELEASER_H_
