// Version names: numbers and grain-id prefixes (see version_spec.h).
#include "grainstore/version_spec.h"

#include <fmt/format.h>

#include <cstdint>

namespace grainstore {
namespace {

constexpr std::size_t kGrainIdHexChars = 64;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The decimal value of the digits `spec`, leading zeros and all, when it is a
// version number (1 to UINT32_MAX); 0 when it is zero or past that range.
std::uint32_t DecimalVersion(std::string_view spec) {
  const std::size_t first = spec.find_first_not_of('0');
  if (first == std::string_view::npos) return 0;
  const std::string_view significant = spec.substr(first);
  if (significant.size() > 10) return 0;  // past 4294967295, the largest version number
  std::uint64_t n = 0;
  for (char c : significant) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  return n <= UINT32_MAX ? static_cast<std::uint32_t>(n) : 0;
}

}  // namespace

Result<VersionSpec> ParseVersionSpec(std::string_view spec) {
  VersionSpec out;
  bool digits = !spec.empty();
  bool hex = !spec.empty();
  for (char c : spec) {
    digits = digits && IsDigit(c);
    hex = hex && IsHex(c);
  }
  // Digits of any length are decimal, as the integer options read them: zeros
  // padding a number to any width do not make it a prefix only.
  if (digits) out.number = DecimalVersion(spec);
  if (hex && spec.size() >= kMinGrainPrefix && spec.size() <= kGrainIdHexChars) {
    out.id_prefix.reserve(spec.size());
    for (char c : spec) {
      out.id_prefix.push_back(c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c);
    }
  }
  const bool zero = digits && spec.find_first_not_of('0') == std::string_view::npos;
  if (zero && out.id_prefix.empty()) {
    // "0" (or "00") can be neither: versions are numbered from 1, and it is
    // too short for a prefix. "000000" still names a grain id prefix.
    return Status::InvalidArgument(
        fmt::format("versions are numbered from 1, got {}", spec));
  }
  // Digits past the largest version number and too long for a prefix (65 or
  // more) are still a number, of a version no chain has: MatchVersion's
  // NotFound, as for a shorter number past the range.
  if (out.number == 0 && out.id_prefix.empty() && !digits) {
    return Status::InvalidArgument(fmt::format(
        "'{}' is neither a version number nor a grain id prefix ({} to {} hex digits)", spec,
        kMinGrainPrefix, kGrainIdHexChars));
  }
  return out;
}

Result<std::size_t> MatchVersion(const std::vector<VersionInfo>& versions,
                                 const VersionSpec& spec, std::string_view raw,
                                 std::string_view subject) {
  if (spec.number != 0) {
    for (std::size_t i = 0; i < versions.size(); ++i) {
      if (versions[i].seq == spec.number) return i;
    }
  }
  if (!spec.id_prefix.empty()) {
    std::size_t found = versions.size();
    for (std::size_t i = 0; i < versions.size(); ++i) {
      if (versions[i].grain_id.compare(0, spec.id_prefix.size(), spec.id_prefix) != 0) continue;
      if (found != versions.size()) {
        return Status::InvalidArgument(fmt::format("grain id prefix {} is ambiguous", raw));
      }
      found = i;
    }
    if (found != versions.size()) return found;
  }
  return Status::NotFound(fmt::format("{} has no version {}", subject, raw));
}

}  // namespace grainstore
