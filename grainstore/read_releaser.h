// Ends a Store's held read (see Db, "Held reads") once it has sat idle for
// kIdle; the Db itself stops reusing one open for kMaxAge. A held read makes
// the next read free of lock calls while nothing commits, but it also keeps
// every other connection's checkpoint from copying frames committed after
// it, and the WAL from restarting: a process that reads and then goes quiet
// must not pin the WAL for long, and one that reads without pause must still
// leave other writers moments to restart it (a read that begins once
// everything is copied into the database does not stand in the way).
//
// The thread starts with the first hold and sleeps without a deadline while
// no read is held, so an idle Store costs no wake-ups. It never waits for the
// Store's mutex: while another thread holds it the Store is busy, not idle.
// A forked child, which has no thread (BackgroundThread), holds no reads.
#ifndef GRAINSTORE_READ_RELEASER_H_
#define GRAINSTORE_READ_RELEASER_H_

#include <atomic>
#include <chrono>
#include <mutex>

#include "background_thread.h"
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

  // Installs OnHold as `db`'s hold hook.
  void Attach();

 private:
  // Db's hold hook, called with *store_mu_ held: wakes the thread when it
  // sleeps without a deadline. False when no thread can end the hold.
  static bool OnHold(void* self);
  void Run();
  // With *store_mu_ held: ends the held read once idle for kIdle. True, with
  // `next` set to when to look again, while a read stays held.
  bool EndIfDue(std::chrono::steady_clock::time_point* next);

  std::mutex* const store_mu_;
  Db* const db_;
  // A read is held and the thread knows. Written under both *store_mu_ and
  // thread_.mu() (taken in that order), so either is enough to read it.
  std::atomic<bool> watching_{false};
  // Started with the first hold, under *store_mu_. Last: its thread reads the
  // members above, and destroying it stops the thread and waits for it.
  BackgroundThread thread_;
};

}  // namespace grainstore

#endif  // GRAINSTORE_READ_RELEASER_H_
