#include "versioning_policy.h"

#include <cctype>
#include <cstddef>

namespace fusefs {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool AllOf(std::string_view s, int (*pred)(int)) {
  for (char c : s) {
    if (!pred(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// vim probes write access with 4913, then 4913 + 123*k.
bool IsVimProbe(std::string_view name) {
  if (name.size() < 4 || name.size() > 6 || !AllOf(name, isdigit)) return false;
  long value = 0;
  for (char c : name) value = value * 10 + (c - '0');
  return value >= 4913;
}

// .*.sw? : a hidden vim swap file (.name.swp, .name.swo, .name.swn ...).
bool IsHiddenSwap(std::string_view name) {
  if (name.size() < 6 || name[0] != '.') return false;
  return name.substr(name.size() - 4, 3) == ".sw";
}

// sed?????? : GNU sed -i's mkstemp name.
bool IsSedTemp(std::string_view name) {
  return name.size() == 9 && StartsWith(name, "sed") && AllOf(name.substr(3), isalnum);
}

// tmp???????? : Python tempfile (8 chars of [a-z0-9_]).
bool IsPythonTemp(std::string_view name) {
  if (name.size() != 11 || !StartsWith(name, "tmp")) return false;
  for (char c : name.substr(3)) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

// Whether `tail` is what mkstemp-style generators draw from [A-Za-z0-9]:
// all lower-case letters or all digits is far likelier a person's name.
bool IsDrawnTail(std::string_view tail) {
  return AllOf(tail, isalnum) && !AllOf(tail, islower) && !AllOf(tail, isdigit);
}

// tmp.?????????? : mktemp(1)'s default name, tmp. and 10 characters drawn
// from [A-Za-z0-9]; ten lower-case letters (tmp.properties) or ten digits (a
// time stamp) are a person's name, and mktemp draws them rarely.
bool IsMktempTemp(std::string_view name) {
  return name.size() == 14 && StartsWith(name, "tmp.") && IsDrawnTail(name.substr(4));
}

// .tmp?????? : Rust's tempfile crate (NamedTempFile::new_in, the usual way
// to save a file atomically in Rust), .tmp and 6 characters from
// [A-Za-z0-9]; as for mktemp, six lower-case letters (.tmpfiles) or six
// digits are a person's name.
bool IsRustTemp(std::string_view name) {
  return name.size() == 10 && StartsWith(name, ".tmp") && IsDrawnTail(name.substr(4));
}

// zi?????? : Info-ZIP's zip writes every archive, new or updated, to zi and
// 6 characters mkstemp draws, then renames it onto the archive's name. Any 6
// letters or digits: one draw in 190 is all lower-case, and the archive may
// not exist yet to look beside, so (as for sed) a file named "ziplines" is
// taken for a temp file too.
bool IsZipTemp(std::string_view name) {
  return name.size() == 8 && StartsWith(name, "zi") && AllOf(name.substr(2), isalnum);
}

// NAME.o?????? NAME.r?????? NAME.i?????? NAME.p?????? with a drawn tail: GNU
// patch's copies (PatchTempBase); by name alone, since NAME may be a file
// the patch is about to create.
bool IsPatchTemp(std::string_view name) {
  return !PatchTempBase(name).empty() && IsDrawnTail(name.substr(name.size() - 6));
}

}  // namespace

bool IsTempName(std::string_view name) {
  if (name.empty()) return false;
  if (EndsWith(name, ".swp") || EndsWith(name, ".swo") || EndsWith(name, ".swx")) return true;
  if (IsHiddenSwap(name) || IsVimProbe(name)) return true;
  if (EndsWith(name, "~")) return true;
  // Backups by copy or rename: sed -i.bak, perl -pi.bak, patch's .orig.
  if (EndsWith(name, ".bak") || EndsWith(name, ".orig")) return true;
  if (name.size() >= 2 && name.front() == '#' && name.back() == '#') return true;
  if (StartsWith(name, ".#")) return true;
  if (EndsWith(name, "___jb_tmp___") || EndsWith(name, "___jb_old___")) return true;
  if (StartsWith(name, ".goutputstream-")) return true;
  if (IsSedTemp(name) || IsPythonTemp(name) || IsMktempTemp(name) || IsRustTemp(name)) {
    return true;
  }
  if (IsZipTemp(name) || IsPatchTemp(name)) return true;
  if (EndsWith(name, ".tmp") || name.find(".tmp.") != std::string_view::npos) return true;
  if (EndsWith(name, ".vsctmp")) return true;
  if (StartsWith(name, ".~lock.") && EndsWith(name, "#")) return true;
  return false;
}

bool IsTempCopyOf(std::string_view name, std::string_view target) {
  constexpr std::size_t kSuffix = 6;
  // NAME_MAX less the leading dot, ".XXXXXX" and the terminating NUL of
  // rsync's buffer (get_tmpname in its receiver.c).
  constexpr std::size_t kMaxStem = 255 - 1 - (1 + kSuffix) - 1;
  std::string_view stem = target;
  if (StartsWith(stem, ".")) stem.remove_prefix(1);
  if (stem.size() > kMaxStem) {
    const auto high = [](char c) { return (static_cast<unsigned char>(c) & 0x80) != 0; };
    const bool cut_in_a_character = high(stem[kMaxStem]);
    stem = stem.substr(0, kMaxStem);
    while (cut_in_a_character && !stem.empty() && high(stem.back())) stem.remove_suffix(1);
  }
  if (EndsWith(stem, ".")) stem.remove_suffix(1);
  if (stem.empty() && target.size() > kMaxStem) {
    // Cut to nothing (characters alone past the limit): rsync then writes
    // the dot and the six characters only.
    return name.size() == 1 + kSuffix && name.front() == '.' &&
           AllOf(name.substr(1), isalnum);
  }
  if (stem.empty() || name.size() != stem.size() + 2 + kSuffix) return false;
  if (name.front() != '.' || name.substr(1, stem.size()) != stem) return false;
  if (name[1 + stem.size()] != '.') return false;
  return AllOf(name.substr(name.size() - kSuffix), isalnum);
}

bool IsTempDirCopyOf(std::string_view name, std::string_view target) {
  constexpr std::size_t kSuffix = 6;
  return !target.empty() && name.size() == target.size() + 1 + kSuffix &&
         StartsWith(name, target) && name[target.size()] == '.' &&
         AllOf(name.substr(name.size() - kSuffix), isalnum);
}

bool IsSuffixedCopyOf(std::string_view name, std::string_view target) {
  constexpr std::size_t kMaxSuffix = 64;
  if (target.empty()) return false;
  // renameio and its kind hide the copy: "." + target + suffix.
  std::string_view rest = name;
  if (!StartsWith(rest, target) && StartsWith(rest, ".")) rest.remove_prefix(1);
  if (!StartsWith(rest, target)) return false;
  const std::string_view suffix = rest.substr(target.size());
  if (suffix.empty() || suffix.size() > kMaxSuffix) return false;
  bool digit = false;
  for (char c : suffix) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '.' || c == '-' || c == '_')) return false;
    digit = digit || std::isdigit(u);
  }
  return digit || suffix.front() == '.';
}

std::string_view PatchTempBase(std::string_view name) {
  constexpr std::size_t kTail = 1 + 1 + 6;
  if (name.size() <= kTail || name[name.size() - kTail] != '.') return {};
  const char letter = name[name.size() - kTail + 1];
  if (letter != 'o' && letter != 'r' && letter != 'i' && letter != 'p') return {};
  if (!AllOf(name.substr(name.size() - 6), isalnum)) return {};
  return name.substr(0, name.size() - kTail);
}

std::string_view SqliteSidecarBase(std::string_view name) {
  for (std::string_view suffix : {"-journal", "-wal", "-shm"}) {
    if (name.size() > suffix.size() && EndsWith(name, suffix)) {
      return name.substr(0, name.size() - suffix.size());
    }
  }
  return {};
}

namespace {

// Whether one of the '/'-separated segments of `key` is `segment`.
bool HasSegment(std::string_view key, std::string_view segment) {
  std::size_t pos = 0;
  while (pos <= key.size()) {
    std::size_t slash = key.find('/', pos);
    std::size_t end = slash == std::string_view::npos ? key.size() : slash;
    if (key.substr(pos, end - pos) == segment) return true;
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return false;
}

}  // namespace

bool IsVcsDirName(std::string_view name) {
  for (std::string_view dir : kVcsDirNames) {
    if (name == dir) return true;
  }
  return false;
}

bool IsInsideVcsDir(std::string_view parent_key) {
  for (std::string_view dir : kVcsDirNames) {
    if (HasSegment(parent_key, dir)) return true;
  }
  // A bare repository (git init --bare, git clone --bare): NAME.git.
  for (std::size_t end = parent_key.find(kBareRepoSuffix); end != std::string_view::npos;
       end = parent_key.find(kBareRepoSuffix, end + 1)) {
    const std::size_t after = end + kBareRepoSuffix.size();
    const bool segment_ends = after == parent_key.size() || parent_key[after] == '/';
    if (segment_ends && end > 0 && parent_key[end - 1] != '/') return true;
  }
  return false;
}

bool IsInsideRsyncDelayDir(std::string_view parent_key) {
  return HasSegment(parent_key, kRsyncDelayDir);
}

bool IsTempCopyMove(std::string_view dir_key, std::string_view name, std::string_view new_dir_key,
                    std::string_view new_name) {
  if (!IsTempCopyOf(name, new_name)) return false;
  if (new_dir_key == dir_key) return true;
  return new_dir_key.size() == dir_key.size() + 1 + kRsyncDelayDir.size() &&
         StartsWith(new_dir_key, dir_key) && new_dir_key[dir_key.size()] == '/' &&
         EndsWith(new_dir_key, kRsyncDelayDir);
}

grainstore::Versioning VersioningFor(std::string_view parent_key, std::string_view name) {
  if (name == ".git" || IsInsideVcsDir(parent_key) || IsInsideRsyncDelayDir(parent_key) ||
      IsTempName(name)) {
    return grainstore::Versioning::kUnversioned;
  }
  return grainstore::Versioning::kVersioned;
}

}  // namespace fusefs
