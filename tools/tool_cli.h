// What the command-line tools share: CLI11 parsing with the tools' exit codes, and the logger
// ("level: message" on stderr).
#pragma once

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace tensat::tools {

/// Parses the command line. nullopt: go on; otherwise the tool exits with the value (0 after
/// --help or --version, 2 for a usage error, which CLI11 has printed).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  return std::nullopt;
}

/// Logs to stderr as "level: message": warnings and errors; with -v info, with -vv debug, with
/// -vvv trace (e.g. why each constant node was not folded); quiet: errors only.
inline void use_tool_logger(const std::string& name, int verbose, bool quiet = false) {
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(quiet            ? spdlog::level::err
                    : verbose >= 3   ? spdlog::level::trace
                    : verbose >= 2   ? spdlog::level::debug
                    : verbose == 1   ? spdlog::level::info
                                     : spdlog::level::warn);
}

}  // namespace tensat::tools
