// Shape inference for the tensor language (see op.h for each operator's meaning).
#include "lang/types.h"

#include <charconv>
#include <sstream>

namespace tensat {

namespace {

InferResult fail(std::string msg) { return InferResult{std::nullopt, std::move(msg)}; }
InferResult ok(ValueType t) { return InferResult{std::move(t), {}}; }
InferResult ok_tensor(Shape s, DType d = DType::F32) {
  return ok(ValueType::of_tensor(TensorType{d, std::move(s)}));
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_sv(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, p - start));
    start = p + 1;
  }
  return out;
}

std::optional<Shape> parse_underscore_dims(std::string_view s) {
  Shape d;
  if (s.empty()) return d;
  for (auto part : split_sv(s, '_')) {
    auto v = parse_int(part);
    if (!v) return std::nullopt;
    d.push_back(*v);
  }
  return d;
}

// Checks that child i is a tensor of dtype f32; the language's computing ops are float32.
const TensorType* f32_tensor(const std::vector<const ValueType*>& c, size_t i) {
  if (i >= c.size() || c[i]->kind != Kind::Tensor || c[i]->tensor.dtype != DType::F32)
    return nullptr;
  return &c[i]->tensor;
}

std::optional<int64_t> int_param(const std::vector<const ValueType*>& c, size_t i) {
  if (i >= c.size() || c[i]->kind != Kind::Int) return std::nullopt;
  return c[i]->num;
}

const std::string* sym_param(const std::vector<const ValueType*>& c, size_t i) {
  if (i >= c.size() || c[i]->kind != Kind::Sym) return nullptr;
  return &c[i]->sym;
}

// A bias operand: the symbol `none`, or an f32 vector of length n.
bool bias_ok(const std::vector<const ValueType*>& c, size_t i, int64_t n) {
  if (i >= c.size()) return false;
  if (c[i]->kind == Kind::Sym) return c[i]->sym == "none";
  const TensorType* t = f32_tensor(c, i);
  return t && t->shape.size() == 1 && t->shape[0] == n;
}

bool valid_dims(const Shape& s) {
  for (auto d : s)
    if (d <= 0) return false;
  return true;
}

InferResult infer_matmul(const std::vector<const ValueType*>& c) {
  const std::string* act = sym_param(c, 0);
  if (!act || !act_from_name(*act)) return fail("matmul: bad activation parameter");
  const TensorType* a = f32_tensor(c, 1);
  const TensorType* b = f32_tensor(c, 2);
  if (!a || !b) return fail("matmul: operands must be f32 tensors");
  if (a->shape.size() < 2 || b->shape.size() < 2) return fail("matmul: operands need rank >= 2");
  int64_t m = a->shape[a->shape.size() - 2], k = a->shape.back();
  int64_t k2 = b->shape[b->shape.size() - 2], n = b->shape.back();
  if (k != k2) return fail("matmul: inner dimensions differ " + shape_str(a->shape) + " x " +
                           shape_str(b->shape));
  Shape out;
  if (a->shape.size() == 2 && b->shape.size() == 2) {  // no batch dimensions (the common case)
    out.reserve(2);
  } else {
    Shape ba(a->shape.begin(), a->shape.end() - 2), bb(b->shape.begin(), b->shape.end() - 2);
    auto batch = broadcast_shapes(ba, bb);
    if (!batch) return fail("matmul: batch dimensions do not broadcast");
    out = std::move(*batch);
    out.reserve(out.size() + 2);
  }
  if (!bias_ok(c, 3, n)) return fail("matmul: bias must be 'none' or an f32 tensor of shape [" + std::to_string(n) + "]");
  out.push_back(m);
  out.push_back(n);
  return ok_tensor(std::move(out));
}

InferResult infer_conv(const std::vector<const ValueType*>& c) {
  auto sh = int_param(c, 0), sw = int_param(c, 1);
  const std::string* pad = sym_param(c, 2);
  const std::string* act = sym_param(c, 3);
  if (!sh || !sw || *sh <= 0 || *sw <= 0) return fail("conv: bad strides");
  if (!pad) return fail("conv: bad padding parameter");
  if (!act || !act_from_name(*act)) return fail("conv: bad activation parameter");
  const TensorType* x = f32_tensor(c, 4);
  const TensorType* w = f32_tensor(c, 5);
  if (!x || !w) return fail("conv: operands must be f32 tensors");
  if (x->shape.size() != 4 || w->shape.size() != 4) return fail("conv: input and weight must be 4-D");
  int64_t cin = x->shape[1], cout = w->shape[0], cpg = w->shape[1];
  if (cpg <= 0 || cin % cpg != 0) return fail("conv: input channels not a multiple of weight's");
  int64_t groups = cin / cpg;
  if (cout % groups != 0) return fail("conv: output channels not divisible by groups");
  if (!bias_ok(c, 6, cout)) return fail("conv: bias must be 'none' or an f32 tensor of shape [" + std::to_string(cout) + "]");
  auto pads = resolve_pads(*pad, w->shape[2], w->shape[3]);
  if (!pads) return fail("conv: padding '" + *pad + "' invalid for this kernel");
  auto oh = window_out(x->shape[2], w->shape[2], *sh, pads->top, pads->bottom);
  auto ow = window_out(x->shape[3], w->shape[3], *sw, pads->left, pads->right);
  if (!oh || !ow) return fail("conv: kernel larger than padded input");
  return ok_tensor({x->shape[0], cout, *oh, *ow});
}

InferResult infer_pool(Op op, const std::vector<const ValueType*>& c) {
  auto kh = int_param(c, 0), kw = int_param(c, 1), sh = int_param(c, 2), sw = int_param(c, 3);
  const std::string* pad = sym_param(c, 4);
  size_t xi = 5;
  if (op == Op::Poolavg) {
    auto cip = int_param(c, 5);
    if (!cip || (*cip != 0 && *cip != 1)) return fail("poolavg: count_include_pad must be 0 or 1");
    xi = 6;
  }
  if (!kh || !kw || !sh || !sw || *kh <= 0 || *kw <= 0 || *sh <= 0 || *sw <= 0)
    return fail("pool: bad kernel or stride");
  if (!pad) return fail("pool: bad padding parameter");
  const TensorType* x = f32_tensor(c, xi);
  if (!x || x->shape.size() != 4) return fail("pool: input must be a 4-D f32 tensor");
  auto pads = resolve_pads(*pad, *kh, *kw);
  if (!pads) return fail("pool: padding '" + *pad + "' invalid for this kernel");
  if (pads->top >= *kh || pads->bottom >= *kh || pads->left >= *kw || pads->right >= *kw)
    return fail("pool: padding must be smaller than the kernel");
  auto oh = window_out(x->shape[2], *kh, *sh, pads->top, pads->bottom);
  auto ow = window_out(x->shape[3], *kw, *sw, pads->left, pads->right);
  if (!oh || !ow) return fail("pool: kernel larger than padded input");
  return ok_tensor({x->shape[0], x->shape[1], *oh, *ow});
}

InferResult infer_transpose(const std::vector<const ValueType*>& c) {
  auto perm = parse_dims(*c[0]);
  if (!perm) return fail("transpose: bad permutation parameter");
  if (c[1]->kind != Kind::Tensor) return fail("transpose: operand must be a tensor");
  const TensorType& x = c[1]->tensor;
  if (perm->size() != x.shape.size()) return fail("transpose: permutation rank differs from input");
  std::vector<bool> seen(perm->size(), false);
  Shape out;
  for (auto p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm->size()) || seen[static_cast<size_t>(p)])
      return fail("transpose: not a permutation");
    seen[static_cast<size_t>(p)] = true;
    out.push_back(x.shape[static_cast<size_t>(p)]);
  }
  return ok_tensor(std::move(out), x.dtype);
}

InferResult infer_reshape(const std::vector<const ValueType*>& c) {
  auto shape = parse_dims(*c[0]);
  if (!shape || !valid_dims(*shape)) return fail("reshape: bad target shape");
  if (c[1]->kind != Kind::Tensor) return fail("reshape: operand must be a tensor");
  if (num_elements(*shape) != num_elements(c[1]->tensor.shape))
    return fail("reshape: element count differs: " + shape_str(c[1]->tensor.shape) + " -> " +
                shape_str(*shape));
  return ok_tensor(std::move(*shape), c[1]->tensor.dtype);
}

InferResult infer_enlarge(const std::vector<const ValueType*>& c) {
  const TensorType* w = f32_tensor(c, 0);
  const TensorType* r = f32_tensor(c, 1);
  if (!w || !r || w->shape.size() != 4 || r->shape.size() != 4)
    return fail("enlarge: operands must be 4-D f32 tensors");
  int64_t kh = r->shape[2], kw = r->shape[3];
  if (w->shape[2] > kh || w->shape[3] > kw) return fail("enlarge: kernel larger than reference");
  if ((kh - w->shape[2]) % 2 != 0 || (kw - w->shape[3]) % 2 != 0)
    return fail("enlarge: kernel sizes differ by an odd amount (cannot centre)");
  return ok_tensor({w->shape[0], w->shape[1], kh, kw});
}

InferResult infer_concat(const std::vector<const ValueType*>& c) {
  auto axis = int_param(c, 0);
  if (!axis) return fail("concat: bad axis");
  if (c[1]->kind != Kind::Tensor || c[2]->kind != Kind::Tensor)
    return fail("concat: operands must be tensors");
  const TensorType& a = c[1]->tensor;
  const TensorType& b = c[2]->tensor;
  if (a.dtype != b.dtype) return fail("concat: dtypes differ");
  if (a.shape.size() != b.shape.size()) return fail("concat: ranks differ");
  if (*axis < 0 || *axis >= static_cast<int64_t>(a.shape.size())) return fail("concat: axis out of range");
  Shape out = a.shape;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (static_cast<int64_t>(i) == *axis) {
      out[i] = a.shape[i] + b.shape[i];
    } else if (a.shape[i] != b.shape[i]) {
      return fail("concat: shapes differ off the axis: " + shape_str(a.shape) + " vs " +
                  shape_str(b.shape));
    }
  }
  return ok_tensor(std::move(out), a.dtype);
}

InferResult infer_split(const std::vector<const ValueType*>& c) {
  auto axis = int_param(c, 0), pos = int_param(c, 1);
  if (!axis || !pos) return fail("split: bad axis or position");
  if (c[2]->kind != Kind::Tensor) return fail("split: operand must be a tensor");
  const TensorType& x = c[2]->tensor;
  if (*axis < 0 || *axis >= static_cast<int64_t>(x.shape.size())) return fail("split: axis out of range");
  int64_t n = x.shape[static_cast<size_t>(*axis)];
  if (*pos <= 0 || *pos >= n) return fail("split: position outside (0, dim)");
  ValueType t;
  t.kind = Kind::Tuple;
  t.tuple.reserve(2);
  t.tuple.push_back(x);
  t.tuple.push_back(x);
  t.tuple[0].shape[static_cast<size_t>(*axis)] = *pos;
  t.tuple[1].shape[static_cast<size_t>(*axis)] = n - *pos;
  return ok(std::move(t));
}

InferResult infer_merge(const std::vector<const ValueType*>& c) {
  auto count = int_param(c, 0);
  const TensorType* w = f32_tensor(c, 1);
  if (!count || *count <= 0) return fail("merge: bad count");
  if (!w || w->shape.size() != 4) return fail("merge: weight must be a 4-D f32 tensor");
  if (w->shape[0] % *count != 0) return fail("merge: output channels not divisible by count");
  return ok_tensor({w->shape[0], w->shape[1] * *count, w->shape[2], w->shape[3]});
}

}  // namespace

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::F64: return "f64";
    case DType::I64: return "i64";
    case DType::I32: return "i32";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
    case DType::Other: return "other";
  }
  return "other";
}

std::optional<DType> dtype_from_name(std::string_view s) {
  for (DType d : {DType::F32, DType::F16, DType::F64, DType::I64, DType::I32, DType::I8,
                  DType::U8, DType::Bool, DType::Other}) {
    if (dtype_name(d) == s) return d;
  }
  return std::nullopt;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

ValueType ValueType::of_tensor(TensorType t) {
  ValueType v;
  v.kind = Kind::Tensor;
  v.tensor = std::move(t);
  return v;
}
ValueType ValueType::of_int(int64_t x) {
  ValueType v;
  v.kind = Kind::Int;
  v.num = x;
  return v;
}
ValueType ValueType::of_sym(std::string s) {
  ValueType v;
  v.kind = Kind::Sym;
  v.sym = std::move(s);
  return v;
}

std::string ValueType::str() const {
  switch (kind) {
    case Kind::Tensor: return std::string(dtype_name(tensor.dtype)) + shape_str(tensor.shape);
    case Kind::Int: return "int " + std::to_string(num);
    case Kind::Sym: return "sym " + sym;
    case Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < tuple.size(); ++i) {
        if (i) s += ", ";
        s += std::string(dtype_name(tuple[i].dtype)) + shape_str(tuple[i].shape);
      }
      return s + ")";
    }
  }
  return "?";
}

std::pair<size_t, size_t> inner_dims(const Shape& s) {
  size_t lead = 0, end = s.size();
  while (lead < end && s[lead] == 1) ++lead;
  while (end > lead && s[end - 1] == 1) --end;
  return {lead, end};
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<int64_t> window_out(int64_t in, int64_t k, int64_t stride, int64_t pad_lo,
                                  int64_t pad_hi) {
  int64_t span = in + pad_lo + pad_hi - k;
  if (span < 0 || stride <= 0) return std::nullopt;
  return span / stride + 1;
}

std::string pad_symbol(const Pads& p, int64_t kh, int64_t kw) {
  if (kh % 2 == 1 && kw % 2 == 1 && p.top == (kh - 1) / 2 && p.bottom == p.top &&
      p.left == (kw - 1) / 2 && p.right == p.left)
    return "same";
  if (p == Pads{}) return "valid";
  return "p" + std::to_string(p.top) + "_" + std::to_string(p.left) + "_" +
         std::to_string(p.bottom) + "_" + std::to_string(p.right);
}

std::optional<Pads> resolve_pads(std::string_view sym, int64_t kh, int64_t kw) {
  if (sym == "same") {
    if (kh % 2 == 0 || kw % 2 == 0) return std::nullopt;
    return Pads{(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2};
  }
  if (sym == "valid") return Pads{};
  if (sym.size() < 2 || sym[0] != 'p') return std::nullopt;
  auto parts = split_sv(sym.substr(1), '_');
  if (parts.size() != 4) return std::nullopt;
  Pads p;
  int64_t* fields[4] = {&p.top, &p.left, &p.bottom, &p.right};
  for (size_t i = 0; i < 4; ++i) {
    auto v = parse_int(parts[i]);
    if (!v || *v < 0) return std::nullopt;
    *fields[i] = *v;
  }
  return p;
}

std::string make_leaf_id(std::string_view name, const TensorType& t) {
  std::string s(name);
  s += "@";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += "_";
    s += std::to_string(t.shape[i]);
  }
  if (t.dtype != DType::F32) {
    s += ":";
    s += dtype_name(t.dtype);
  }
  return s;
}

std::optional<LeafId> parse_leaf_id(std::string_view id) {
  size_t at = id.rfind('@');
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  LeafId out;
  out.name = std::string(id.substr(0, at));
  std::string_view rest = id.substr(at + 1);
  size_t colon = rest.find(':');
  if (colon != std::string_view::npos) {
    auto d = dtype_from_name(rest.substr(colon + 1));
    if (!d) return std::nullopt;
    out.type.dtype = *d;
    rest = rest.substr(0, colon);
  }
  auto dims = parse_underscore_dims(rest);
  if (!dims || !valid_dims(*dims)) return std::nullopt;
  out.type.shape = *dims;
  return out;
}

std::string dims_to_sym(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += "_";
    s += std::to_string(d[i]);
  }
  return s;
}

std::optional<std::vector<int64_t>> parse_dims(const ValueType& v) {
  if (v.kind == Kind::Int) return std::vector<int64_t>{v.num};
  if (v.kind != Kind::Sym || v.sym.empty()) return std::nullopt;
  return parse_underscore_dims(v.sym);
}

std::string make_opaque_id(int64_t index, const std::vector<TensorType>& outputs) {
  std::string s = std::to_string(index);
  for (const auto& t : outputs) {
    s += "|";
    s += dtype_name(t.dtype);
    s += shape_str(t.shape);
  }
  return s;
}

std::optional<OpaqueId> parse_opaque_id(std::string_view id) {
  auto parts = split_sv(id, '|');
  if (parts.size() < 2) return std::nullopt;
  OpaqueId out;
  auto idx = parse_int(parts[0]);
  if (!idx || *idx < 0) return std::nullopt;
  out.index = *idx;
  for (size_t i = 1; i < parts.size(); ++i) {
    auto p = parts[i];
    size_t lb = p.find('[');
    if (lb == std::string_view::npos || p.back() != ']') return std::nullopt;
    auto d = dtype_from_name(p.substr(0, lb));
    if (!d) return std::nullopt;
    TensorType t;
    t.dtype = *d;
    auto inner = p.substr(lb + 1, p.size() - lb - 2);
    if (!inner.empty()) {
      for (auto part : split_sv(inner, ',')) {
        auto v = parse_int(part);
        if (!v || *v < 0) return std::nullopt;
        t.shape.push_back(*v);
      }
    }
    out.outputs.push_back(std::move(t));
  }
  return out;
}

InferResult infer_type(Op op, int64_t num, std::string_view sym,
                       const std::vector<const ValueType*>& c) {
  const OpInfo& info = op_info(op);
  int n = static_cast<int>(c.size());
  if (n < info.min_arity || (info.max_arity >= 0 && n > info.max_arity))
    return fail(std::string(info.name) + ": wrong number of children (" + std::to_string(n) + ")");
  switch (op) {
    case Op::Num: return ok(ValueType::of_int(num));
    case Op::Sym: return ok(ValueType::of_sym(std::string(sym)));
    case Op::Input:
    case Op::Weight: {
      if (c[0]->kind != Kind::Sym) return fail(std::string(info.name) + ": identifier must be a symbol");
      auto id = parse_leaf_id(c[0]->sym);
      if (!id) return fail(std::string(info.name) + ": malformed identifier '" + c[0]->sym + "'");
      return ok(ValueType::of_tensor(id->type));
    }
    case Op::Zeros: {
      auto len = int_param(c, 0);
      if (!len || *len <= 0) return fail("zeros: length must be a positive integer");
      return ok_tensor({*len});
    }
    case Op::Ewadd:
    case Op::Ewmul: {
      const TensorType* a = f32_tensor(c, 0);
      const TensorType* b = f32_tensor(c, 1);
      if (!a || !b) return fail(std::string(info.name) + ": operands must be f32 tensors");
      auto s = broadcast_shapes(a->shape, b->shape);
      if (!s) return fail(std::string(info.name) + ": shapes do not broadcast: " +
                          shape_str(a->shape) + " vs " + shape_str(b->shape));
      return ok_tensor(std::move(*s));
    }
    case Op::Matmul: return infer_matmul(c);
    case Op::Conv: return infer_conv(c);
    case Op::Relu:
    case Op::Tanh:
    case Op::Sigmoid: {
      const TensorType* x = f32_tensor(c, 0);
      if (!x) return fail(std::string(info.name) + ": operand must be an f32 tensor");
      return ok_tensor(x->shape);
    }
    case Op::Act: {
      const std::string* act = sym_param(c, 0);
      auto a = act ? act_from_name(*act) : std::nullopt;
      // relu, tanh and sigmoid have operators of their own (one form per activation).
      if (!a || !a->parameterized()) return fail("act: the activation must be clip or leaky");
      const TensorType* x = f32_tensor(c, 1);
      if (!x) return fail("act: operand must be an f32 tensor");
      return ok_tensor(x->shape);
    }
    case Op::Poolmax:
    case Op::Poolavg: return infer_pool(op, c);
    case Op::Transpose: return infer_transpose(c);
    case Op::Reshape: return infer_reshape(c);
    case Op::Enlarge: return infer_enlarge(c);
    case Op::Concat: return infer_concat(c);
    case Op::Split: return infer_split(c);
    case Op::Split0:
    case Op::Split1: {
      if (c[0]->kind != Kind::Tuple || c[0]->tuple.size() != 2)
        return fail(std::string(info.name) + ": operand must be a split");
      return ok(ValueType::of_tensor(c[0]->tuple[op == Op::Split0 ? 0 : 1]));
    }
    case Op::Merge: return infer_merge(c);
    case Op::Noop: {
      for (auto* t : c)
        if (t->kind != Kind::Tensor) return fail("noop: children must be tensors");
      ValueType t;
      t.kind = Kind::Tuple;
      for (auto* x : c) t.tuple.push_back(x->tensor);
      return ok(std::move(t));
    }
    case Op::Opaque: {
      if (c[0]->kind != Kind::Sym) return fail("opaque: identifier must be a symbol");
      auto id = parse_opaque_id(c[0]->sym);
      if (!id) return fail("opaque: malformed identifier '" + c[0]->sym + "'");
      for (size_t i = 1; i < c.size(); ++i)
        if (c[i]->kind != Kind::Tensor) return fail("opaque: inputs must be tensors");
      if (id->outputs.size() == 1) return ok(ValueType::of_tensor(id->outputs[0]));
      ValueType t;
      t.kind = Kind::Tuple;
      t.tuple = std::move(id->outputs);
      return ok(std::move(t));
    }
    case Op::Select: {
      auto k = int_param(c, 0);
      if (!k || c[1]->kind != Kind::Tuple || *k < 0 ||
          *k >= static_cast<int64_t>(c[1]->tuple.size()))
        return fail("select: index out of range or operand not a tuple");
      return ok(ValueType::of_tensor(c[1]->tuple[static_cast<size_t>(*k)]));
    }
  }
  return fail("unknown operator");
}

}  // namespace tensat
