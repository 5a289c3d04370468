// MemoryTool::Execute: JSON decoding, parameter checks (contract C21), path
// validation (C4-C8, C18) and dispatch to the command handlers.
#include <cstdint>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "commands.h"
#include "grainstore/path.h"
#include "json_input.h"
#include "memtool/memtool.h"

namespace memtool {
namespace {

using internal::Failure;
using nlohmann::json;

ToolResult MissingParam(std::string_view name, std::string_view command) {
  std::string msg = "Parameter `";
  msg.append(name);
  msg.append("` is required for command: ");
  msg.append(command);
  return Failure(std::move(msg));
}

// The string parameter `name`, or nullptr if it is absent or not a string.
const std::string* StringParam(const json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// An integer JSON value clamped to int64 (integers above INT64_MAX become it).
std::int64_t ClampedInt(const json& value) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return u > kMax ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(u);
  }
  return value.get<std::int64_t>();
}

// view_range applies only as an array of exactly two integers (C11).
std::optional<internal::ViewRange> ParseViewRange(const json& doc) {
  const auto it = doc.find("view_range");
  if (it == doc.end() || !it->is_array() || it->size() != 2) return std::nullopt;
  const json& a = (*it)[0];
  const json& b = (*it)[1];
  if (!a.is_number_integer() || !b.is_number_integer()) return std::nullopt;
  return internal::ViewRange{ClampedInt(a), ClampedInt(b)};
}

// Validates a path argument; on failure fills `error` with the C4-C7 message.
std::optional<internal::PathArg> ParsePath(const std::string& raw, ToolResult* error) {
  // A path over the store's length limits is not an error of its own here:
  // nothing can exist there, so each command answers with its contract message
  // for a missing path, and only a write that would make it says it is too long.
  grainstore::Result<grainstore::MemoryPath> parsed =
      grainstore::ParseMemoryPath(raw, grainstore::TooLong::kMark);
  if (!parsed.has_value()) {
    *error = Failure(parsed.error().message());
    return std::nullopt;
  }
  return internal::PathArg{raw, std::move(parsed).value()};
}

// Runs one decoded command object.
ToolResult Dispatch(const internal::Target& target, const internal::JsonInput& input) {
  const json& doc = input.doc;
  const std::string* command_ptr = StringParam(doc, "command");
  if (command_ptr == nullptr) return Failure("Parameter `command` is required");
  const std::string& command = *command_ptr;
  const bool is_rename = command == "rename";
  if (command != "view" && command != "create" && command != "str_replace" && command != "insert" &&
      command != "delete" && !is_rename) {
    return Failure("Unknown command: " + command);
  }

  // Required parameters, in the order of contract section 4. A path is
  // validated as soon as it is found (section 11.3: "before anything
  // else"), as the SDKs' handlers validate it before they read the rest.
  const std::string* path_raw = StringParam(doc, is_rename ? "old_path" : "path");
  if (path_raw == nullptr) return MissingParam(is_rename ? "old_path" : "path", command);
  ToolResult error;
  const std::optional<internal::PathArg> path = ParsePath(*path_raw, &error);
  if (!path) return error;
  const std::string* second = nullptr;
  const json* insert_line = nullptr;
  if (command == "create") {
    if ((second = StringParam(doc, "file_text")) == nullptr)
      return MissingParam("file_text", command);
  } else if (command == "str_replace") {
    if ((second = StringParam(doc, "old_str")) == nullptr) return MissingParam("old_str", command);
  } else if (command == "insert") {
    const auto it = doc.find("insert_line");
    if (it == doc.end() || !it->is_number_integer()) return MissingParam("insert_line", command);
    insert_line = &*it;
    if ((second = StringParam(doc, "insert_text")) == nullptr) {
      return MissingParam("insert_text", command);
    }
  } else if (is_rename) {
    if ((second = StringParam(doc, "new_path")) == nullptr)
      return MissingParam("new_path", command);
  }
  std::string_view new_str;
  if (command == "str_replace") {
    const auto it = doc.find("new_str");
    if (it != doc.end() && !it->is_null()) {
      if (!it->is_string())
        return Failure("Parameter `new_str` must be a string for command: str_replace");
      new_str = it->get_ref<const std::string&>();
    }
  }

  if (command == "view") return internal::View(target, *path, ParseViewRange(doc));
  if (command == "create") return internal::Create(target, *path, *second);
  if (command == "str_replace") return internal::StrReplace(target, *path, *second, new_str);
  if (command == "insert") {
    const auto wide = input.wide_integers.find("insert_line");
    return internal::Insert(
        target, *path,
        {ClampedInt(*insert_line),
         wide != input.wide_integers.end() ? wide->second : insert_line->dump()},
        *second);
  }
  if (command == "delete") return internal::Delete(target, *path);
  const std::optional<internal::PathArg> to = ParsePath(*second, &error);
  if (!to) return error;
  return internal::Rename(target, *path, *to);
}

}  // namespace

MemoryTool::MemoryTool(grainstore::Store* store, grainstore::NsId ns) : store_(store), ns_(ns) {}

ToolResult MemoryTool::Execute(std::string_view json_command) {
  try {
    if (json_command.size() > kMaxInputBytes) {
      return Failure("Input is too large (limit " + std::to_string(kMaxInputBytes) + " bytes)");
    }
    internal::JsonInput input;
    if (!internal::ParseJsonInput(json_command, &input)) {
      return Failure(grainstore::IsValidUtf8(json_command) ? "Input is not valid JSON"
                                               : "Input is not valid UTF-8");
    }
    if (!input.doc.is_object()) return Failure("Input must be a JSON object");
    return Dispatch(internal::Target{store_, ns_}, input);
  } catch (const std::bad_alloc&) {
    return Failure("Out of memory");
  } catch (...) {
    // Nothing below throws by design; this keeps the no-throw promise if a
    // dependency ever does.
    return Failure("Internal error");
  }
}

}  // namespace memtool
