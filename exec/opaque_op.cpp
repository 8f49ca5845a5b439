// OpaqueOp attribute access (see opaque_op.h).
#include "exec/opaque_op.h"

namespace tensat::exec {

int64_t OpaqueOp::attr_i(const std::string& a, int64_t def) const {
  auto it = attrs.find(a);
  return it != attrs.end() && it->second.kind == OpaqueAttr::Kind::Int ? it->second.i : def;
}

float OpaqueOp::attr_f(const std::string& a, float def) const {
  auto it = attrs.find(a);
  return it != attrs.end() && it->second.kind == OpaqueAttr::Kind::Float ? it->second.f : def;
}

std::string OpaqueOp::attr_s(const std::string& a, const std::string& def) const {
  auto it = attrs.find(a);
  return it != attrs.end() && it->second.kind == OpaqueAttr::Kind::String ? it->second.s : def;
}

std::optional<std::vector<int64_t>> OpaqueOp::attr_ints(const std::string& a) const {
  auto it = attrs.find(a);
  if (it == attrs.end() || it->second.kind != OpaqueAttr::Kind::Ints) return std::nullopt;
  return it->second.ints;
}

int OpaqueOp::child_of_slot(int slot) const {
  for (size_t k = 0; k < slots.size(); ++k)
    if (slots[k] == slot) return static_cast<int>(k);
  return -1;
}

std::string OpaqueOp::describe() const {
  std::string s = domain.empty() ? op_type : domain + "." + op_type;
  return name.empty() ? s : s + " '" + name + "'";
}

}  // namespace tensat::exec
