// EnumNames: the names of an enum's values, in one table, for the command line, reports and
// file formats: name(v) and parse(text) cannot disagree, and a new value needs one row.
//
//   constexpr EnumNames<Mode, 2> kModeNames{{{{Mode::Fast, "fast"}, {Mode::Exact, "exact"}}}};
//   kModeNames.name(Mode::Fast) == "fast";  kModeNames.parse("exact") == Mode::Exact;
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tensat {

template <typename E, size_t N>
struct EnumNames {
  std::array<std::pair<E, std::string_view>, N> entries;

  /// The value's name ("?" for a value missing from the table: a broken invariant).
  constexpr std::string_view name(E v) const {
    for (const auto& [e, n] : entries)
      if (e == v) return n;
    return "?";
  }
  /// The value named `s` (exact match), or nullopt.
  constexpr std::optional<E> parse(std::string_view s) const {
    for (const auto& [e, n] : entries)
      if (n == s) return e;
    return std::nullopt;
  }
  /// "a|b|c", for messages and help texts.
  std::string list(std::string_view sep = "|") const {
    std::string out;
    for (const auto& [e, n] : entries) out += (out.empty() ? "" : std::string(sep)) + std::string(n);
    return out;
  }
};

}  // namespace tensat
