#include "mount_table.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>
#include <utility>
#include <vector>

namespace fusefs {
namespace {

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string Unescape(std::string_view field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && field.size() - i > 3) {
      const std::string_view oct = field.substr(i + 1, 3);
      bool digits = true;
      for (char c : oct) digits = digits && c >= '0' && c <= '7';
      if (digits) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

// The non-empty pieces of `line` between `separator`s.
std::vector<std::string_view> Fields(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (start < line.size()) {
    std::size_t end = line.find(separator, start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) fields.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return fields;
}

// The user_id= of a mount's super options ("rw,user_id=1000,group_id=1000").
std::optional<uid_t> OwnerIn(std::string_view super_options) {
  constexpr std::string_view kKey = "user_id=";
  for (const std::string_view option : Fields(super_options, ',')) {
    if (!option.starts_with(kKey)) continue;
    uid_t uid = 0;
    const char* first = option.data() + kKey.size();
    const char* last = option.data() + option.size();
    auto [ptr, ec] = std::from_chars(first, last, uid);
    if (ec == std::errc() && ptr == last && first != last) return uid;
    return std::nullopt;
  }
  return std::nullopt;
}

// The numbers of a "major:minor" field; {0, 0} if it is not one.
std::pair<unsigned, unsigned> DeviceIn(std::string_view field) {
  const std::size_t colon = field.find(':');
  if (colon == std::string_view::npos) return {0, 0};
  unsigned major = 0;
  unsigned minor = 0;
  const char* end = field.data() + field.size();
  auto [p1, e1] = std::from_chars(field.data(), field.data() + colon, major);
  auto [p2, e2] = std::from_chars(field.data() + colon + 1, end, minor);
  if (e1 != std::errc() || e2 != std::errc() || p1 != field.data() + colon || p2 != end) {
    return {0, 0};
  }
  return {major, minor};
}

// This process's mount table, "" if it cannot be read.
std::string ReadMountInfo() {
  std::ifstream in("/proc/self/mountinfo");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

MountEntry MountIn(std::string_view mountinfo, std::string_view mountpoint) {
  MountEntry entry;
  std::size_t start = 0;
  while (start < mountinfo.size()) {
    std::size_t end = mountinfo.find('\n', start);
    if (end == std::string_view::npos) end = mountinfo.size();
    const std::vector<std::string_view> fields =
        Fields(mountinfo.substr(start, end - start), ' ');
    start = end + 1;
    // id parent major:minor root mountpoint options [optional...] - type source super
    if (fields.size() < 7 || Unescape(fields[4]) != mountpoint) continue;
    for (std::size_t i = 6; i + 1 < fields.size(); ++i) {
      if (fields[i] == "-") {
        entry = MountEntry{std::string(fields[i + 1]), std::nullopt};  // later lines are on top
        if (i + 3 < fields.size()) entry.owner = OwnerIn(fields[i + 3]);
        std::tie(entry.major, entry.minor) = DeviceIn(fields[2]);
        break;
      }
    }
  }
  return entry;
}

namespace {

// ResolveMountPath against the mount table's text `mountinfo`.
std::string ResolveIn(const std::string& path, std::string_view mountinfo) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec) return path;
  // "dir/" normalises to "dir/": its name is "dir".
  if (!absolute.has_filename() && absolute != absolute.root_path()) {
    absolute = absolute.parent_path();
  }
  if (absolute != absolute.root_path()) {
    const fs::path parent = fs::weakly_canonical(absolute.parent_path(), ec);
    if (!ec) absolute = parent / absolute.filename();
  }
  // A name the mount table lists is taken as it is, never looked at: a
  // stat of a mountpoint goes to its file system, and would wait as long as
  // a daemon that cannot answer (stopped, say) does.
  if (!MountIn(mountinfo, absolute.string()).type.empty()) return absolute.string();
  // A last name that is a symlink: the mount is on the directory it names.
  if (fs::is_symlink(fs::symlink_status(absolute, ec))) {
    const fs::path target = fs::canonical(absolute, ec);
    if (!ec) absolute = target;
  }
  return absolute.string();
}

}  // namespace

std::string ResolveMountPath(const std::string& path) {
  return ResolveIn(path, ReadMountInfo());
}

MountEntry MountAt(const std::string& path) {
  const std::string mountinfo = ReadMountInfo();
  return MountIn(mountinfo, ResolveIn(path, mountinfo));
}

}  // namespace fusefs
