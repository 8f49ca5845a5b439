// ImportError: bad user input found while importing (exit status 2). The message names the
// file, node or input and says what is wrong.
#pragma once

#include <stdexcept>

namespace tensat {

class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tensat
