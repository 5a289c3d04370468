// Registration of the `areev` subcommands. Each Add*Command function adds its
// subcommand(s) to `app` and appends a Command whose `run` performs it; the
// options it parses live in state owned by that closure. `global` must
// outlive the returned Commands.
#ifndef CLI_COMMANDS_H_
#define CLI_COMMANDS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_common.h"
#include "decimal.h"
#include "grainstore/display_text.h"
#include "grainstore/version_spec.h"

namespace cli {

// A value as an error message quotes it: as given, but quoted when it is
// empty or has blanks in it, which would otherwise show as nothing.
inline std::string ShownValue(const std::string& value) {
  if (!value.empty() && value.find_first_of(" \t\r\n\v\f") == std::string::npos) return value;
  return "'" + value + "'";
}

// For every integer option (counts, sequence numbers, chain ids): plain
// decimal digits whose value lies in [lo, hi], else a usage error "must be a
// decimal number from LO to HI, got X". Attach with transform(), not check():
// the value is rewritten without leading zeros, because CLI11 then converts it
// with strtoull(base 0), which would read "010" as octal (see decimal.h).
inline CLI::Validator DecimalIn(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        const std::optional<std::uint64_t> n = ParseDecimal(value, lo, hi);
        if (!n.has_value()) {
          return "must be a decimal number from " + std::to_string(lo) + " to " +
                 std::to_string(hi) + ", got " + ShownValue(value);
        }
        value = std::to_string(*n);
        return "";
      },
      "N");
}

// The range of a chain id: SQLite rowids, from 1.
inline constexpr std::uint64_t kMaxChainId = std::numeric_limits<std::int64_t>::max();
// The range of a count or a cursor with no limit of its own.
inline constexpr std::uint64_t kMaxCount = std::numeric_limits<std::uint64_t>::max();

// For --version, --from and --to: a version number from 1 or a grain-id
// prefix, as grainstore::ParseVersionSpec reads them (whether the version
// exists is the command's to answer).
inline CLI::Validator VersionName() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        auto spec = grainstore::ParseVersionSpec(value);
        return spec.has_value() ? "" : spec.error().message();
      },
      "N|PREFIX");
}

// For names such as a subject or a relation: an empty or all-blank value
// names nothing, so it is refused rather than read as "any" or as a name no
// one can see in a table. A name to store (`add`) may not show nothing at
// all (grainstore::IsBlankText: Unicode's spaces, characters of no glyph); a
// name to look up (`recall`, `history`) only may not be empty or ASCII
// whitespace, so that a fact an earlier build stored under such a name can
// still be found.
inline CLI::Validator NotBlank(bool to_store = false) {
  return CLI::Validator(
      [to_store](std::string& value) -> std::string {
        const bool blank =
            to_store ? grainstore::IsBlankText(value)
                     : value.find_first_not_of(" \t\r\n\v\f") == std::string::npos;
        return blank ? "must not be empty or blank" : "";
      },
      "TEXT");
}

// memtool: one memory-tool JSON command (argument, or stdin with "-"), or
// --batch: one command per stdin line, one JSON result line per command.
void AddMemtoolCommand(CLI::App& app, const GlobalOptions& global,
                       std::vector<Command>* out);

// history, cat, diff: versions of a memory file (or any chain).
void AddVersionCommands(CLI::App& app, const GlobalOptions& global,
                        std::vector<Command>* out);

// log, restore, purge: the op-log and tombstone management.
void AddLifecycleCommands(CLI::App& app, const GlobalOptions& global,
                          std::vector<Command>* out);

// add, recall: plain fact and event grains.
void AddFactCommands(CLI::App& app, const GlobalOptions& global,
                     std::vector<Command>* out);

// mount, umount: the FUSE view (fails with exit 1 when built without FUSE).
void AddMountCommands(CLI::App& app, const GlobalOptions& global,
                      std::vector<Command>* out);

}  // namespace cli

#endif  // CLI_COMMANDS_H_
