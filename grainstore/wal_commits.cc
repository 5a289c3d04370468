// Scans a -wal's frame headers for a commit of the header's generation.
#include "wal_commits.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace grainstore {

namespace {

constexpr std::size_t kWalHeaderBytes = 32;
constexpr std::size_t kFrameHeaderBytes = 24;
constexpr std::uint32_t kWalMagic = 0x377f0682;  // the low bit names the checksum's byte order

std::uint32_t BigEndian32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
         (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

// Reads up to `n` bytes at `offset`: how many were read, or -1.
ssize_t ReadAt(int fd, unsigned char* out, std::size_t n, off_t offset) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, offset + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

WalCommits ReadWalCommits(const std::string& path) {
  // SQLite locks the database file and the -shm, never the -wal: closing
  // this descriptor drops no lock of this process's connections.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno == ENOENT ? WalCommits::kNone : WalCommits::kUnknown;
  unsigned char header[kWalHeaderBytes];
  const ssize_t got = ReadAt(fd.get(), header, sizeof header, 0);
  if (got < 0) return WalCommits::kUnknown;
  // SQLite takes a -wal shorter than its header for an empty one.
  if (static_cast<std::size_t>(got) < sizeof header) return WalCommits::kNone;
  if ((BigEndian32(header) & ~std::uint32_t{1}) != kWalMagic) return WalCommits::kUnknown;
  const std::uint32_t page_size = BigEndian32(header + 8);
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) {
    return WalCommits::kUnknown;
  }
  const unsigned char* salts = header + 16;
  const off_t frame_bytes = static_cast<off_t>(kFrameHeaderBytes + page_size);
  for (off_t at = kWalHeaderBytes;; at += frame_bytes) {
    unsigned char frame[kFrameHeaderBytes];
    const ssize_t read = ReadAt(fd.get(), frame, sizeof frame, at);
    if (read < 0) return WalCommits::kUnknown;
    if (static_cast<std::size_t>(read) < sizeof frame) return WalCommits::kNone;
    // A frame of another generation (left past the end of a restarted
    // -wal) ends what SQLite reads.
    if (std::memcmp(frame + 8, salts, 8) != 0) return WalCommits::kNone;
    if (BigEndian32(frame + 4) != 0) return WalCommits::kSome;  // the file's size after a commit
  }
}

}  // namespace grainstore
