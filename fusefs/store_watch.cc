#include "store_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace fusefs {
namespace {

// How long a burst of events settles before the look (see the header).
constexpr int kSettleMs = 2;

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace

StoreWatch::~StoreWatch() { Stop(); }

bool StoreWatch::Start(const std::string& db_path, std::function<void()> changed,
                       std::string* error) {
  // The directory that holds the file itself, through any symbolic link.
  std::error_code ec;
  std::filesystem::path file = std::filesystem::canonical(db_path, ec);
  if (ec) file = db_path;
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  file_name_ = file.filename().string();
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  const bool ready = inotify_fd_ >= 0 &&
                     ::inotify_add_watch(inotify_fd_, dir.c_str(), IN_MODIFY) >= 0 &&
                     (stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0;
  if (!ready) {
    *error = fmt::format("cannot watch {} for other writers: {}", dir.string(),
                         std::strerror(errno));
    CloseFd(&inotify_fd_);
    return false;
  }
  changed_ = std::move(changed);
  thread_ = std::thread([this] { Run(); });
  return true;
}

void StoreWatch::Stop() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    while (::write(stop_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  CloseFd(&inotify_fd_);
  CloseFd(&stop_fd_);
}

void StoreWatch::Run() {
  for (;;) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;  // the poller still finds every change
    }
    if (fds[1].revents != 0) return;
    if (!DrainEvents()) continue;
    // A burst of writes to the store: let it settle, so that the commit is
    // published and one look serves every write of the burst (the mount's
    // own saves raise these events too, thousands a second in a loop of
    // appends), then look.
    pollfd stop = {stop_fd_, POLLIN, 0};
    int waited;
    while ((waited = ::poll(&stop, 1, kSettleMs)) < 0 && errno == EINTR) {
    }
    if (waited != 0) return;  // stopping
    DrainEvents();
    changed_();
  }
}

bool StoreWatch::DrainEvents() {
  const std::string wal = file_name_ + "-wal";
  bool ours = false;
  alignas(inotify_event) char buf[16 * (sizeof(inotify_event) + NAME_MAX + 1)];
  for (;;) {
    const ssize_t got = ::read(inotify_fd_, buf, sizeof buf);
    if (got <= 0) return ours;  // EAGAIN: drained
    for (ssize_t at = 0; at < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buf + at);
      if (event->len > 0) {
        const std::string_view name(event->name);
        ours = ours || name == wal || name == file_name_;
      } else if ((event->mask & IN_Q_OVERFLOW) != 0) {
        ours = true;  // events were lost: one of them may have been ours
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
}

}  // namespace fusefs
