// S-expression reader/printer and term building.
#include "lang/sexpr.h"

#include <cctype>
#include <charconv>

namespace tensat {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view t) : text_(t) {}

  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }

  SExpr read() {
    skip_space();
    if (pos_ >= text_.size()) error("unexpected end of input");
    SExpr e;
    e.line = line_;
    e.col = col_;
    char c = text_[pos_];
    if (c == '(') {
      e.is_atom = false;
      advance();
      while (true) {
        skip_space();
        if (pos_ >= text_.size()) error("missing ')' for '(' opened at line " + std::to_string(e.line));
        if (text_[pos_] == ')') {
          advance();
          break;
        }
        e.list.push_back(read());
      }
      return e;
    }
    if (c == ')') error("unexpected ')'");
    if (c == '"') {
      advance();
      e.quoted = true;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        e.atom += text_[pos_];
        advance();
      }
      if (pos_ >= text_.size()) error("unterminated string");
      advance();
      return e;
    }
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) &&
           text_[pos_] != '(' && text_[pos_] != ')' && text_[pos_] != ';') {
      e.atom += text_[pos_];
      advance();
    }
    return e;
  }

 private:
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ';') {  // comment to end of line
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else {
        break;
      }
    }
  }
  [[noreturn]] void error(const std::string& msg) {
    throw ParseError("line " + std::to_string(line_) + ", column " + std::to_string(col_) + ": " + msg);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '(' || c == ')' || c == '"' || c == ';')
      return true;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string quote_sym(const std::string& s) { return needs_quotes(s) ? "\"" + s + "\"" : s; }

}  // namespace

std::string SExpr::str() const {
  if (is_atom) return quoted ? "\"" + atom + "\"" : atom;
  std::string s = "(";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) s += " ";
    s += list[i].str();
  }
  return s + ")";
}

std::vector<SExpr> parse_sexprs(std::string_view text) {
  Reader r(text);
  std::vector<SExpr> out;
  while (!r.at_end()) out.push_back(r.read());
  return out;
}

SExpr parse_sexpr(std::string_view text) {
  auto all = parse_sexprs(text);
  if (all.size() != 1)
    throw ParseError("expected exactly one expression, found " + std::to_string(all.size()));
  return all[0];
}

bool atom_is_int(const SExpr& e) {
  if (!e.is_atom || e.quoted || e.atom.empty()) return false;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(e.atom.data(), e.atom.data() + e.atom.size(), v);
  return ec == std::errc() && p == e.atom.data() + e.atom.size();
}

ir::NodeId build_term(ir::Graph& g, const SExpr& e) {
  auto where = [&e] { return "line " + std::to_string(e.line) + ", column " + std::to_string(e.col); };
  if (e.is_atom) {
    if (atom_is_int(e)) return g.num(std::stoll(e.atom));
    return g.sym(e.atom);
  }
  if (e.list.empty() || !e.list[0].is_atom) throw ParseError(where() + ": expected an operator");
  auto op = op_from_name(e.list[0].atom);
  if (!op || is_param_leaf(*op))
    throw ParseError(where() + ": unknown operator '" + e.list[0].atom + "'");
  std::vector<ir::NodeId> kids;
  for (size_t i = 1; i < e.list.size(); ++i) kids.push_back(build_term(g, e.list[i]));
  ir::NodeId id = 0;
  std::string err;
  if (!g.try_add(ir::Node{*op, std::move(kids), 0, {}}, &id, &err))
    throw ir::TypeError(where() + ": " + err);
  return id;
}

ir::NodeId parse_term(ir::Graph& g, std::string_view text) { return build_term(g, parse_sexpr(text)); }

std::string print_term(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  if (n.op == Op::Num) return std::to_string(n.num);
  if (n.op == Op::Sym) return quote_sym(n.sym);
  std::string s = "(" + std::string(op_name(n.op));
  for (auto c : n.children) s += " " + print_term(g, c);
  return s + ")";
}

std::string print_graph(const ir::Graph& g) {
  std::string out;
  for (size_t i = 0; i < g.size(); ++i) {
    const ir::Node& n = g.node(static_cast<ir::NodeId>(i));
    if (is_param_leaf(n.op)) continue;
    out += "%" + std::to_string(i) + " = (" + std::string(op_name(n.op));
    for (auto c : n.children) {
      const ir::Node& cn = g.node(c);
      if (cn.op == Op::Num) out += " " + std::to_string(cn.num);
      else if (cn.op == Op::Sym) out += " " + quote_sym(cn.sym);
      else out += " %" + std::to_string(c);
    }
    out += ")  : " + g.type(static_cast<ir::NodeId>(i)).str() + "\n";
  }
  if (g.has_root()) out += "root %" + std::to_string(g.root()) + "\n";
  return out;
}

}  // namespace tensat
