// S-expressions: the text form of terms (tests, debugging) and the syntax of rule patterns.
//
//   (relu (conv 1 1 same none (input x@1_3_8_8) (weight w@4_3_3_3) (zeros 4)))
//
// An atom that is an integer is a Num leaf; any other atom is a Sym leaf ("..." quotes a
// symbol that would otherwise read as a number). An operator is the head of a list.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lang/graph.h"

namespace tensat {

struct SExpr {
  bool is_atom = true;
  bool quoted = false;       ///< atom was written in double quotes
  std::string atom;
  std::vector<SExpr> list;
  int line = 1, col = 1;     ///< position of the first character, for error messages
  std::string str() const;   ///< back to text
};

class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses every S-expression in `text`; throws ParseError naming line and column.
std::vector<SExpr> parse_sexprs(std::string_view text);
/// Parses exactly one S-expression.
SExpr parse_sexpr(std::string_view text);

/// True if the atom reads as an integer.
bool atom_is_int(const SExpr& e);

/// Builds the term into `g` (shared subterms are shared nodes); returns its id.
/// Throws ParseError on syntax/unknown operators and ir::TypeError on ill-typed terms.
ir::NodeId parse_term(ir::Graph& g, std::string_view text);
ir::NodeId build_term(ir::Graph& g, const SExpr& e);

/// The term rooted at `id` as one S-expression (shared subterms are repeated).
std::string print_term(const ir::Graph& g, ir::NodeId id);
/// The whole graph, one node per line: "%5 = (conv 1 1 same relu %2 %3 %4)".
std::string print_graph(const ir::Graph& g);

}  // namespace tensat
