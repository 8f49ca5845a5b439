// RuleError: a malformed rule, pattern or condition. One exception type for the whole rule
// pipeline: the rules/ loader (tensat::rules::RuleError is an alias) and the engine's
// compile_rewrite both throw it, so a caller catches one type. what() names file and line
// where known ("file:line: ...").
#pragma once

#include <stdexcept>

namespace tensat {

class RuleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tensat
