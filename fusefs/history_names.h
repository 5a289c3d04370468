// Names of the read-only version files under .history/: immutable, colon-free
// and sorting in version order, keeping the file's extension. Pure functions.
#ifndef FUSEFS_HISTORY_NAMES_H_
#define FUSEFS_HISTORY_NAMES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "grainstore/types.h"

namespace fusefs {

// Longest extension a version's name keeps, dot included.
inline constexpr std::size_t kMaxExtensionBytes = 32;

// The extension of a file name including the dot ("notes.md" -> ".md",
// "a.tar.gz" -> ".gz"); "" for none, for dot-files such as ".bashrc" and for
// one longer than kMaxExtensionBytes.
std::string_view Extension(std::string_view name);

// "20261130T084512Z" for a UTC time in nanoseconds since the epoch.
std::string CompactUtc(std::int64_t time_ns);

// "v000001-20261130T084512Z-1a2b3c4d.md": version `seq`, created at
// `created_ns`, grain id prefix (8 hex), extension of `file_name`.
std::string VersionFileName(const grainstore::VersionInfo& version, std::string_view file_name);

// The version number a VersionFileName starts with ("v000003-..." -> 3), so
// a lookup reads that one version; nullopt for a name no version has.
std::optional<std::uint32_t> VersionSeqOfName(std::string_view name);

}  // namespace fusefs

#endif  // FUSEFS_HISTORY_NAMES_H_
