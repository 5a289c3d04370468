// Naming one version of a chain: by its 1-based number or by a grain-id prefix.
// The one resolver `areev cat`, `areev diff`, Store::ReadVersion and the
// language bindings share, so a spec means the same thing everywhere.
#ifndef GRAINSTORE_VERSION_SPEC_H_
#define GRAINSTORE_VERSION_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/result.h"
#include "grainstore/types.h"

namespace grainstore {

// Shortest grain-id prefix accepted as a version name.
inline constexpr std::size_t kMinGrainPrefix = 6;

// A parsed version name. A spec of digits only is a version number, read as
// decimal whatever its length ("01" and "00000000001" are 1), and when it is
// also 6 to 64 characters long it is a grain-id prefix too: "58526585" may be
// either, since grain ids are hex. The number wins when that version exists.
// Digits past the largest version number and 65 or more long are neither:
// they name no version (NamesNone).
struct VersionSpec {
  std::uint32_t number = 0;  // 0: not a number (or too large to be one)
  std::string id_prefix;     // lowercase hex, kMinGrainPrefix+ chars; "" if none
  // True when no version can have this name (see above).
  bool NamesNone() const { return number == 0 && id_prefix.empty(); }
};

// InvalidArgument when `spec` is neither digits (of a number from 1) nor a
// prefix of 6 to 64 hex characters (empty, other characters, a short hex
// string with letters, or "0": versions are numbered from 1).
Result<VersionSpec> ParseVersionSpec(std::string_view spec);

// Index in `versions` of the version `spec` names: the version with that
// number if one exists, else the single version whose grain id starts with the
// prefix. NotFound when none matches; InvalidArgument when a prefix matches
// more than one. `subject` only words the errors.
Result<std::size_t> MatchVersion(const std::vector<VersionInfo>& versions,
                                 const VersionSpec& spec, std::string_view raw,
                                 std::string_view subject);

}  // namespace grainstore

#endif  // GRAINSTORE_VERSION_SPEC_H_
