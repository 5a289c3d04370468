#include "fork_guard.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <vector>

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

// Participants are prepared in registration order and released in reverse;
// no Store call holds two Stores' mutexes, so any order is deadlock-free.
void Prepare() {
  RegistryMutex().lock();
  for (ForkParticipant* p : Registry()) p->PrepareFork();
}

void InParent() {
  auto& all = Registry();
  std::for_each(all.rbegin(), all.rend(), [](ForkParticipant* p) { p->ParentDone(); });
  RegistryMutex().unlock();
}

void InChild() {
  auto& all = Registry();
  std::for_each(all.rbegin(), all.rend(), [](ForkParticipant* p) { p->ChildDone(); });
  RegistryMutex().unlock();
}

}  // namespace

void RegisterForFork(ForkParticipant* participant) {
  static const bool installed = pthread_atfork(&Prepare, &InParent, &InChild) == 0;
  (void)installed;
  std::lock_guard lock(RegistryMutex());
  Registry().push_back(participant);
}

void UnregisterForFork(ForkParticipant* participant) {
  std::lock_guard lock(RegistryMutex());
  auto& all = Registry();
  all.erase(std::remove(all.begin(), all.end(), participant), all.end());
}

}  // namespace grainstore
