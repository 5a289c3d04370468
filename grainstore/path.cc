// Memory path rules (contract C4-C8) and directory-entry name rules.
#include "grainstore/path.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grainstore/result.h"
#include "grainstore/status.h"

namespace grainstore {
namespace {

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// True if `s` contains an encoded '.', '/' or '\\' (%2e, %2f, %5c, any case).
bool HasEncodedSeparator(std::string_view s) {
  for (std::size_t i = 0; i + 2 < s.size(); ++i) {
    if (s[i] != '%') continue;
    const char a = s[i + 1];
    const char b = AsciiLower(s[i + 2]);
    if ((a == '2' && (b == 'e' || b == 'f')) || (a == '5' && b == 'c')) return true;
  }
  return false;
}

// True if `s` contains a byte no memory path may hold: backslash or NUL.
bool HasForbiddenByte(std::string_view s) {
  return s.find('\\') != std::string_view::npos || s.find('\0') != std::string_view::npos;
}

Status EscapeError(std::string_view raw) {
  std::string msg = "Path ";
  msg.append(raw);
  msg.append(" would escape /memories directory");
  return Status::InvalidArgument(std::move(msg));
}

}  // namespace

std::string TooLongPathMessage(std::string_view raw) {
  std::string msg = "Path ";
  msg.append(raw);
  msg.append(" is too long");
  return msg;
}

Result<MemoryPath> ParseMemoryPath(std::string_view raw, TooLong policy) {
  // C4: a plain prefix test on the raw string.
  if (raw.substr(0, kMemoriesRoot.size()) != kMemoriesRoot) {
    std::string msg = "Path must start with /memories, got: ";
    msg.append(raw);
    return Status::InvalidArgument(std::move(msg));
  }
  std::string_view rest = raw.substr(kMemoriesRoot.size());
  // C5: "/memoriesX", "/memories_evil/x" name a sibling, not the directory.
  if (!rest.empty() && rest.front() != '/') return EscapeError(raw);
  // C6: backslash, NUL and URL-encoded separators.
  if (HasForbiddenByte(raw) || HasEncodedSeparator(raw)) return EscapeError(raw);

  // C7/C8: split on '/', drop empty and "." segments, reject "..". The
  // length limits are ours, not the contract's: they apply only to a path
  // the contract accepts, so a ".." anywhere still reads as an escape.
  MemoryPath path;
  path.key.assign(kMemoriesRoot);
  bool too_long = false;
  std::size_t pos = 0;
  while (pos <= rest.size()) {
    std::size_t slash = rest.find('/', pos);
    if (slash == std::string_view::npos) slash = rest.size();
    const std::string_view segment = rest.substr(pos, slash - pos);
    pos = slash + 1;
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") return EscapeError(raw);
    if (too_long) continue;  // still looking for "..", no longer building
    too_long = segment.size() > kMaxNameBytes ||
               path.key.size() + 1 + segment.size() > kMaxKeyBytes;
    if (too_long) continue;
    path.key.push_back('/');
    path.key.append(segment);
    path.segments.emplace_back(segment);
  }
  if (too_long && policy == TooLong::kRefuse) return Status::InvalidArgument(TooLongPathMessage(raw));
  path.too_long = too_long;
  return path;
}

// Strict UTF-8 check (no overlongs, surrogates or code points past U+10FFFF).
std::size_t Utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  // The second byte's bounds exclude overlong forms (E0, F0), surrogates
  // (ED) and code points past U+10FFFF (F4).
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

void AppendUtf8(std::string* out, std::uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII runs stay a tight loop
      ++i;
      continue;
    }
    const std::size_t n = Utf8SequenceLength(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

Status ValidateName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("Name is empty");
  if (name == "." || name == "..") {
    return Status::InvalidArgument("Name " + std::string(name) + " is not allowed");
  }
  if (name.size() > kMaxNameBytes) {
    return Status::NameTooLong("Name is longer than " + std::to_string(kMaxNameBytes) + " bytes");
  }
  if (name.find('/') != std::string_view::npos) {
    return Status::InvalidArgument("Name " + std::string(name) + " contains '/'");
  }
  if (name.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("Name contains a NUL byte");
  }
  if (name.find('\\') != std::string_view::npos) {
    return Status::InvalidArgument("Name " + std::string(name) + " contains a backslash");
  }
  if (!IsValidUtf8(name)) return Status::InvalidArgument("Name is not valid UTF-8");
  if (HasEncodedSeparator(name)) {
    return Status::InvalidArgument("Name " + std::string(name) +
                                   " contains an encoded separator (%2e, %2f or %5c)");
  }
  return Status::Ok();
}

std::string JoinKey(std::string_view parent_key, std::string_view name) {
  std::string key;
  key.reserve(parent_key.size() + 1 + name.size());
  key.append(parent_key);
  key.push_back('/');
  key.append(name);
  return key;
}

std::string ParentKey(std::string_view key) {
  if (key.size() <= kMemoriesRoot.size()) return std::string(kMemoriesRoot);
  const std::size_t slash = key.rfind('/');
  if (slash == std::string_view::npos || slash < kMemoriesRoot.size()) {
    return std::string(kMemoriesRoot);
  }
  return std::string(key.substr(0, slash));
}

std::string_view BaseName(std::string_view key) {
  if (key.size() <= kMemoriesRoot.size()) return {};
  const std::size_t slash = key.rfind('/');
  if (slash == std::string_view::npos) return key;
  return key.substr(slash + 1);
}

bool IsStrictlyInside(std::string_view key, std::string_view ancestor) {
  return key.size() > ancestor.size() && key.substr(0, ancestor.size()) == ancestor &&
         key[ancestor.size()] == '/';
}

}  // namespace grainstore
