// Registration of the `areev` subcommands. Each Add*Command function adds its
// subcommand(s) to `app` and appends a Command whose `run` performs it; the
// options it parses live in state owned by that closure. `global` must
// outlive the returned Commands.
#ifndef CLI_COMMANDS_H_
#define CLI_COMMANDS_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_common.h"

namespace cli {

// For counts and sequence numbers: CLI11 reads "-1" (or " -1") into an
// unsigned option as a huge value, so any '-' is refused first, with a plain
// message.
inline CLI::Validator NotNegative() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return value.find('-') != std::string::npos ? "must be 0 or more, got " + value : "";
      },
      "N>=0");
}

// For names such as a subject or a relation: an empty or all-blank value
// names nothing, so it is refused rather than read as "any" or as a name no
// one can see in a table.
inline CLI::Validator NotBlank() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return value.find_first_not_of(" \t\r\n\v\f") == std::string::npos
                   ? "must not be empty or blank"
                   : "";
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
