// The bodies of `.history` versions open in the kernel, one copy per version
// however many handles have it open. A version never changes, so every open
// of it can serve the same bytes; each open used to read its own copy, and
// ten opens of a 64 MiB version held 640 MiB of the daemon's memory (a
// parallel `grep` over `.history`, a backup walking it). Each handle holds a
// reference; a version's copy goes with its last handle.
#ifndef FUSEFS_VERSION_BODIES_H_
#define FUSEFS_VERSION_BODIES_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fusefs {

// Thread-safe; a leaf lock.
class VersionBodies {
 public:
  using Body = std::shared_ptr<const std::string>;

  VersionBodies() = default;
  VersionBodies(const VersionBodies&) = delete;
  VersionBodies& operator=(const VersionBodies&) = delete;

  // The body of the version with grain id `grain_id` while a handle holds
  // it, else null. (Versions with one grain id hold one body: the id is a
  // hash of the version's encoding, body included.)
  Body Find(const std::string& grain_id);
  // Keeps `body` as that version's and returns it, or the copy that an open
  // racing this one kept first.
  Body Share(const std::string& grain_id, std::string body);
  // Versions whose copy a handle holds.
  std::size_t held();
  // Versions remembered, held or not (a sweep bounds them).
  std::size_t remembered();

 private:
  // Forgets versions no handle holds any more, once the map has doubled
  // since the last sweep.
  void SweepLocked();

  std::mutex mu_;
  std::unordered_map<std::string, std::weak_ptr<const std::string>> bodies_;
  std::size_t sweep_at_ = kMinSweepAt;
  static constexpr std::size_t kMinSweepAt = 64;
};

}  // namespace fusefs

#endif  // FUSEFS_VERSION_BODIES_H_
