#include "log.h"

#include <syslog.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "grainstore/display_text.h"

namespace fusefs {
namespace {

std::atomic<bool> g_syslog{false};
std::atomic<bool> g_verbose{false};
std::mutex g_stderr_mu;

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}

int SyslogPriority(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return LOG_DEBUG;
    case LogLevel::kInfo: return LOG_INFO;
    case LogLevel::kWarning: return LOG_WARNING;
    case LogLevel::kError: return LOG_ERR;
  }
  return LOG_ERR;
}

}  // namespace

void LogToSyslog() {
  openlog("areev-mount", LOG_PID, LOG_DAEMON);
  g_syslog = true;
}

void SetLogVerbose(bool verbose) { g_verbose = verbose; }

void LogLine(LogLevel level, std::string_view raw) {
  if (level == LogLevel::kDebug && !g_verbose) return;
  // Lines quote names that applications chose: one line each, with no
  // control character for a terminal or a log reader to act on.
  const std::string text = grainstore::DisplayText(raw, 0, grainstore::Malformed::kEscape);
  if (g_syslog) {
    syslog(SyslogPriority(level), "%s: %.*s", std::string(LevelName(level)).c_str(),
           static_cast<int>(text.size()), text.data());
    return;
  }
  std::string line = fmt::format("areev mount: {}: {}\n", LevelName(level), text);
  std::lock_guard<std::mutex> lock(g_stderr_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace fusefs
