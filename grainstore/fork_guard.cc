#include "fork_guard.h"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <new>
#include <vector>

#include "db.h"

namespace grainstore {
namespace {

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

std::vector<ForkParticipant*>& Registry() {
  static std::vector<ForkParticipant*> participants;
  return participants;
}

// The ForkHoldOffs in flight and the forks waiting for them. Lock order:
// HoldOffs().mu before RegistryMutex(). A fork takes mu, waits for
// in_flight == 0 and keeps mu across the fork; a holder takes mu only to
// count itself in or out, so it may take RegistryMutex (to register or
// unregister its Store) while a fork waits.
struct HoldOffState {
  std::mutex mu;
  std::condition_variable cv;  // remade in the child: see InChild
  int in_flight = 0;
  int forks_waiting = 0;  // new holders wait while > 0, so a fork is not starved
};

HoldOffState& HoldOffs() {
  static HoldOffState state;
  return state;
}

// Participants are prepared in registration order and released in reverse;
// no Store call holds two Stores' mutexes, so any order is deadlock-free.
void Prepare() {
  HoldOffState& h = HoldOffs();
  std::unique_lock lock(h.mu);
  ++h.forks_waiting;
  h.cv.wait(lock, [&h] { return h.in_flight == 0; });
  --h.forks_waiting;
  (void)lock.release();  // held across fork(); InParent / InChild unlock it
  RegistryMutex().lock();
  for (ForkParticipant* p : Registry()) p->PrepareFork();
  // Last: a thread holding it holds no Store's mutex and waits for none.
  LockConnectionRegistryForFork();
}

void InParent() {
  UnlockConnectionRegistryAfterFork();
  auto& all = Registry();
  std::for_each(all.rbegin(), all.rend(), [](ForkParticipant* p) { p->ParentDone(); });
  RegistryMutex().unlock();
  HoldOffs().mu.unlock();
  HoldOffs().cv.notify_all();  // holders that waited for this fork
}

void InChild() {
  UnlockConnectionRegistryAfterFork();
  auto& all = Registry();
  std::for_each(all.rbegin(), all.rend(), [](ForkParticipant* p) { p->ChildDone(); });
  RegistryMutex().unlock();
  HoldOffState& h = HoldOffs();
  // The parent's other threads are not in the child, but the condition
  // variable still counts those that waited on it, and glibc's signalling
  // can wait for such waiters; a fresh one (the old needs no destructor
  // run: it owns nothing) starts with none. The same threads may have
  // been counted as forks waiting.
  ::new (static_cast<void*>(&h.cv)) std::condition_variable();
  h.forks_waiting = 0;
  h.mu.unlock();
}

void InstallForkHandlers() {
  static const bool installed = pthread_atfork(&Prepare, &InParent, &InChild) == 0;
  (void)installed;
}

}  // namespace

void RegisterForFork(ForkParticipant* participant) {
  InstallForkHandlers();
  std::lock_guard lock(RegistryMutex());
  Registry().push_back(participant);
}

void UnregisterForFork(ForkParticipant* participant) {
  std::lock_guard lock(RegistryMutex());
  auto& all = Registry();
  all.erase(std::remove(all.begin(), all.end(), participant), all.end());
}

ForkHoldOff::ForkHoldOff() {
  // Before the first Store opens: a fork during that opening waits too.
  InstallForkHandlers();
  HoldOffState& h = HoldOffs();
  std::unique_lock lock(h.mu);
  h.cv.wait(lock, [&h] { return h.forks_waiting == 0; });
  ++h.in_flight;
}

ForkHoldOff::~ForkHoldOff() {
  HoldOffState& h = HoldOffs();
  {
    std::lock_guard lock(h.mu);
    --h.in_flight;
  }
  h.cv.notify_all();  // a fork waiting for the last holder
}

}  // namespace grainstore
