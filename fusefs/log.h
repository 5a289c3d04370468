// Logging for the mount daemon: fmt-formatted lines to stderr while in the
// foreground, to syslog once daemonized. Thread-safe.
#ifndef FUSEFS_LOG_H_
#define FUSEFS_LOG_H_

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace fusefs {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// Sends later lines to syslog (ident "areev-mount") instead of stderr.
void LogToSyslog();

// Enables kDebug lines (off by default).
void SetLogVerbose(bool verbose);

// Writes one line, its text made safe to show (grainstore::DisplayText:
// control characters and bytes that are not UTF-8 escaped). kError lines
// carry the word "ERROR" (tests fail on it): use it only for failures that
// are bugs or real I/O trouble, never for an errno an application can
// provoke on purpose.
void LogLine(LogLevel level, std::string_view text);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  LogLine(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace fusefs

#endif  // FUSEFS_LOG_H_
