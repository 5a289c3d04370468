// Keeps fork() from splitting a Store's work. A thread of the parent may hold
// a Store's mutex, or run a checkpoint inside SQLite, when another thread
// forks; the child has a copy of that state but not the thread, and its first
// call on the Store would wait forever for the mutex. pthread_atfork handlers
// take every open Store's mutex (and wait out its checkpoint) before the fork
// and release them after it, in the parent and in the child, so fork() waits
// for the Store calls in flight (and, below, for Stores being opened or
// closed) and the child starts with idle Stores.
//
// A Store still opening or already closing is not registered, yet its
// connection may be inside SQLite's global or shared-memory mutexes, or hold
// a file lock that SQLite's in-process bookkeeping records; the child would
// wait for those forever too. So fork() also waits for every ForkHoldOff.
#ifndef GRAINSTORE_FORK_GUARD_H_
#define GRAINSTORE_FORK_GUARD_H_

namespace grainstore {

// What fork() must not split. Prepare runs before the fork, with the
// registry's lock held; ParentDone and ChildDone after it.
class ForkParticipant {
 public:
  virtual void PrepareFork() = 0;
  virtual void ParentDone() = 0;
  virtual void ChildDone() = 0;

 protected:
  ~ForkParticipant() = default;
};

// Thread-safe. A participant must be unregistered before it is destroyed,
// and must not call these from its own Prepare/Done.
void RegisterForFork(ForkParticipant* participant);
void UnregisterForFork(ForkParticipant* participant);

// Held across a Store's whole opening (Store::Open, registration included)
// and closing (~Store, unregistration included): fork() in another thread
// waits until no ForkHoldOff exists, and a ForkHoldOff made while a fork
// waits or runs waits until the fork is done. So the thread holding one
// must not wait for a thread that is making one (no nesting, and no
// ForkHoldOff on a thread a holder joins), and must not fork itself.
// Thread-safe.
class ForkHoldOff {
 public:
  ForkHoldOff();
  ~ForkHoldOff();
  ForkHoldOff(const ForkHoldOff&) = delete;
  ForkHoldOff& operator=(const ForkHoldOff&) = delete;
};

}  // namespace grainstore

#endif  // GRAINSTORE_FORK_GUARD_H_
