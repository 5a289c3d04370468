// Result constructors and store-status mapping shared by the commands, and
// the JSON-line serialiser.
#include <cerrno>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "commands.h"
#include "json_fast.h"
#include "grainstore/options.h"
#include "grainstore/path.h"
#include "memtool/memtool.h"

namespace memtool {
namespace internal {

ToolResult Success(std::string content) {
  ToolResult result;
  result.content = std::move(content);
  return result;
}

ToolResult Failure(std::string message) {
  ToolResult result;
  result.is_error = true;
  result.content.reserve(7 + message.size());
  result.content.append("Error: ");
  result.content.append(message);
  result.message = std::move(message);
  return result;
}

ToolResult StorageFailure(std::string_view raw, const grainstore::Status& status) {
  if (status.sys_errno() == ENOMEM) {
    // SQLite ran out of memory: answered as the tool answers its own lack.
    ToolResult result = Failure("Out of memory");
    result.detail = status.message();
    return result;
  }
  std::string msg = "Storage operation failed for ";
  msg.append(raw);
  msg.append(" (");
  msg.append(grainstore::StatusCodeName(status.code()));
  msg.append(")");
  ToolResult result = Failure(std::move(msg));
  result.detail = status.message();
  return result;
}

std::string TooLargeMessage(std::string_view raw) {
  std::string msg = "File ";
  msg.append(raw);
  msg.append(" would exceed the size limit of ");
  msg.append(std::to_string(grainstore::Limits::kMaxBodyBytes));
  msg.append(" bytes");
  return msg;
}

}  // namespace internal

std::string ToJsonLine(const ToolResult& result) {
  std::string line;
  line.reserve(result.content.size() + 48);
  line.append("{\"content\": ");
  if (!internal::TryAppendJsonString(result.content, &line)) {
    // Invalid UTF-8 in content becomes U+FFFD instead of throwing.
    line.append(nlohmann::json(result.content)
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  line.append(result.is_error ? ", \"is_error\": true}" : ", \"is_error\": false}");
  return line;
}

}  // namespace memtool
