#include "history_names.h"

#include <ctime>

#include <fmt/format.h>

namespace fusefs {

std::string_view Extension(std::string_view name) {
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return {};
  // A version's name must stay a valid name (255 bytes) after its prefix
  // (33 bytes, more past a million versions); an "extension" this long is no
  // file type a program would go by.
  if (name.size() - dot > kMaxExtensionBytes) return {};
  return name.substr(dot);
}

std::string CompactUtc(std::int64_t time_ns) {
  std::time_t seconds = static_cast<std::time_t>(time_ns / 1'000'000'000);
  if (time_ns < 0 && time_ns % 1'000'000'000 != 0) --seconds;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string VersionFileName(const grainstore::VersionInfo& version, std::string_view file_name) {
  std::string_view id = version.grain_id;
  return fmt::format("v{:06}-{}-{}{}", version.seq, CompactUtc(version.created_ns),
                     id.substr(0, 8), Extension(file_name));
}

std::optional<std::uint32_t> VersionSeqOfName(std::string_view name) {
  constexpr std::size_t kMinDigits = 6;  // VersionFileName pads to six
  if (name.empty() || name.front() != 'v') return std::nullopt;
  std::size_t end = name.find('-', 1);
  if (end == std::string_view::npos || end - 1 < kMinDigits) return std::nullopt;
  std::uint64_t seq = 0;
  for (char c : name.substr(1, end - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    seq = seq * 10 + static_cast<std::uint64_t>(c - '0');
    if (seq > UINT32_MAX) return std::nullopt;
  }
  if (seq == 0) return std::nullopt;
  return static_cast<std::uint32_t>(seq);
}

}  // namespace fusefs
