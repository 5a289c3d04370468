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

// One command whose parameters passed every check that needs no store.
// Pointers and views refer into the JsonInput it was decoded from.
struct Checked {
  std::string_view command;
  internal::PathArg path;
  std::optional<internal::PathArg> to;  // rename's new_path
  const std::string* second = nullptr;  // file_text, old_str, insert_text
  std::string_view new_str;             // str_replace
  const json* insert_line = nullptr;
};

// Checks one decoded command object's parameters; on failure fills `error`
// with the contract's message.
std::optional<Checked> CheckParams(const internal::JsonInput& input, ToolResult* error) {
  const json& doc = input.doc;
  const std::string* command_ptr = StringParam(doc, "command");
  if (command_ptr == nullptr) {
    *error = Failure("Parameter `command` is required");
    return std::nullopt;
  }
  const std::string& command = *command_ptr;
  const bool is_rename = command == "rename";
  if (command != "view" && command != "create" && command != "str_replace" && command != "insert" &&
      command != "delete" && !is_rename) {
    *error = Failure("Unknown command: " + command);
    return std::nullopt;
  }
  const auto missing = [&](std::string_view name) {
    *error = MissingParam(name, command);
    return std::nullopt;
  };

  // Required parameters, in the order of contract section 4. A path is
  // validated as soon as it is found (section 11.3: "before anything
  // else"), as the SDKs' handlers validate it before they read the rest.
  const std::string* path_raw = StringParam(doc, is_rename ? "old_path" : "path");
  if (path_raw == nullptr) return missing(is_rename ? "old_path" : "path");
  std::optional<internal::PathArg> path = ParsePath(*path_raw, error);
  if (!path) return std::nullopt;
  Checked checked{.command = command, .path = std::move(*path)};
  if (command == "create") {
    if ((checked.second = StringParam(doc, "file_text")) == nullptr) return missing("file_text");
  } else if (command == "str_replace") {
    if ((checked.second = StringParam(doc, "old_str")) == nullptr) return missing("old_str");
  } else if (command == "insert") {
    const auto it = doc.find("insert_line");
    if (it == doc.end() || !it->is_number_integer()) return missing("insert_line");
    checked.insert_line = &*it;
    if ((checked.second = StringParam(doc, "insert_text")) == nullptr) {
      return missing("insert_text");
    }
  } else if (is_rename) {
    if ((checked.second = StringParam(doc, "new_path")) == nullptr) return missing("new_path");
  }
  if (command == "str_replace") {
    const auto it = doc.find("new_str");
    if (it != doc.end() && !it->is_null()) {
      if (!it->is_string()) {
        *error = Failure("Parameter `new_str` must be a string for command: str_replace");
        return std::nullopt;
      }
      checked.new_str = it->get_ref<const std::string&>();
    }
  }
  if (is_rename) {
    checked.to = ParsePath(*checked.second, error);
    if (!checked.to) return std::nullopt;
  }
  return checked;
}

// Runs one checked command on the store.
ToolResult Run(const internal::Target& target, const internal::JsonInput& input,
               const Checked& c) {
  if (c.command == "view") return internal::View(target, c.path, ParseViewRange(input.doc));
  if (c.command == "create") return internal::Create(target, c.path, *c.second);
  if (c.command == "str_replace") return internal::StrReplace(target, c.path, *c.second, c.new_str);
  if (c.command == "insert") {
    const auto wide = input.wide_integers.find("insert_line");
    return internal::Insert(
        target, c.path,
        {ClampedInt(*c.insert_line),
         wide != input.wide_integers.end() ? wide->second : c.insert_line->dump()},
        *c.second);
  }
  if (c.command == "delete") return internal::Delete(target, c.path);
  return internal::Rename(target, c.path, *c.to);
}

// Decodes the command's text; on failure fills `error`.
bool Decode(std::string_view json_command, internal::JsonInput* input, ToolResult* error) {
  if (json_command.size() > kMaxInputBytes) {
    *error = Failure("Input is too large (limit " + std::to_string(kMaxInputBytes) + " bytes)");
    return false;
  }
  if (!internal::ParseJsonInput(json_command, input)) {
    *error = Failure(grainstore::IsValidUtf8(json_command) ? "Input is not valid JSON"
                                                         : "Input is not valid UTF-8");
    return false;
  }
  if (!input->doc.is_object()) {
    *error = Failure("Input must be a JSON object");
    return false;
  }
  return true;
}

// Decodes the command's text into `input` and checks it: every check that
// needs no store. On failure fills `error`.
std::optional<Checked> Check(std::string_view json_command, internal::JsonInput* input,
                             ToolResult* error) {
  if (!Decode(json_command, input, error)) return std::nullopt;
  return CheckParams(*input, error);
}

// Runs `body`, turning an escaping exception into the contract's error.
template <typename Body>
ToolResult NoThrow(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    ToolResult result = Failure("Out of memory");
    result.detail = "out of memory";  // for the operator's log, as a store failure's
    return result;
  } catch (...) {
    // Nothing below throws by design; this keeps the no-throw promise if a
    // dependency ever does.
    return Failure("Internal error");
  }
}

}  // namespace

MemoryTool::MemoryTool(grainstore::Store* store, grainstore::NsId ns) : store_(store), ns_(ns) {}

ToolResult MemoryTool::Execute(std::string_view json_command) {
  return NoThrow([&] {
    internal::JsonInput input;
    ToolResult error;
    const std::optional<Checked> checked = Check(json_command, &input, &error);
    if (!checked) return error;
    return Run(internal::Target{store_, ns_}, input, *checked);
  });
}

std::optional<ToolResult> RejectedWithoutStore(std::string_view json_command) {
  ToolResult result = NoThrow([&] {
    internal::JsonInput input;
    ToolResult error;
    if (!Check(json_command, &input, &error)) return error;
    return ToolResult{};
  });
  if (!result.is_error) return std::nullopt;
  return result;
}

}  // namespace memtool
