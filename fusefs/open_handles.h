// The objects the daemon gives the kernel as handles (fi->fh) of directories
// and of `.history` versions. The kernel hands each back at its release; one
// still open when the daemon stops (a process holding a directory open at a
// SIGTERM) is never released, and is freed here with the filesystem.
#ifndef FUSEFS_OPEN_HANDLES_H_
#define FUSEFS_OPEN_HANDLES_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace fusefs {

class OpenHandles {
 public:
  OpenHandles() = default;
  OpenHandles(const OpenHandles&) = delete;
  OpenHandles& operator=(const OpenHandles&) = delete;
  ~OpenHandles();

  // Takes `object`; returns the handle the kernel is given for it.
  template <typename T>
  std::uint64_t Add(std::unique_ptr<T> object) {
    T* raw = object.release();
    Keep(raw, [](void* p) { delete static_cast<T*>(p); });
    return reinterpret_cast<std::uint64_t>(raw);
  }

  // The object behind a handle Add returned and Remove has not freed.
  template <typename T>
  static T* Get(std::uint64_t handle) {
    return reinterpret_cast<T*>(handle);
  }

  // Frees the object behind `handle` (its release, or a failed reply to
  // its open).
  void Remove(std::uint64_t handle);

  std::size_t size() const;

 private:
  using Deleter = void (*)(void*);
  void Keep(void* object, Deleter deleter);

  mutable std::mutex mu_;
  std::unordered_map<void*, Deleter> owned_;
};

}  // namespace fusefs

#endif  // FUSEFS_OPEN_HANDLES_H_
