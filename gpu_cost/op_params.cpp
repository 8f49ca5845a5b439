// Decoding of operator signatures (see op_params.h).
#include "gpu_cost/op_params.h"

#include "lang/weights.h"

namespace tensat::cost {

namespace {

bool is_f32(const ValueType* v) { return v->kind == Kind::Tensor && v->tensor.dtype == DType::F32; }

}  // namespace

std::optional<ValueType> output_type(Op op, const Children& c) {
  InferResult r = infer_type(op, 0, "", c);
  return r.type;
}

std::optional<ConvDesc> conv_desc(const Children& c) {
  if (c.size() != 7 || !output_type(Op::Conv, c)) return std::nullopt;
  ConvDesc d;
  const Shape& x = c[4]->shape();
  const Shape& w = c[5]->shape();
  d.n = x[0], d.cin = x[1], d.h = x[2], d.w = x[3];
  d.cout = w[0], d.cin_per_group = w[1], d.kh = w[2], d.kw = w[3];
  d.groups = d.cin / d.cin_per_group;
  d.sh = c[0]->num, d.sw = c[1]->num;
  d.pads = *resolve_pads(c[2]->sym, d.kh, d.kw);
  d.act = *act_from_name(c[3]->sym);
  d.has_bias = is_f32(c[6]);
  d.oh = *window_out(d.h, d.kh, d.sh, d.pads.top, d.pads.bottom);
  d.ow = *window_out(d.w, d.kw, d.sw, d.pads.left, d.pads.right);
  return d;
}

std::optional<PoolDesc> pool_desc(Op op, const Children& c) {
  if ((op != Op::Poolmax && op != Op::Poolavg) || !output_type(op, c)) return std::nullopt;
  PoolDesc d;
  d.max = op == Op::Poolmax;
  d.kh = c[0]->num, d.kw = c[1]->num, d.sh = c[2]->num, d.sw = c[3]->num;
  d.pads = *resolve_pads(c[4]->sym, d.kh, d.kw);
  size_t xi = 5;
  if (!d.max) {
    d.count_include_pad = c[5]->num == 1;
    xi = 6;
  }
  const Shape& x = c[xi]->shape();
  d.n = x[0], d.c = x[1], d.h = x[2], d.w = x[3];
  d.oh = *window_out(d.h, d.kh, d.sh, d.pads.top, d.pads.bottom);
  d.ow = *window_out(d.w, d.kw, d.sw, d.pads.left, d.pads.right);
  return d;
}

std::optional<MatmulDesc> matmul_desc(const Children& c) {
  if (c.size() != 4) return std::nullopt;
  auto out = output_type(Op::Matmul, c);
  if (!out) return std::nullopt;
  MatmulDesc d;
  const Shape& a = c[1]->shape();
  const Shape& b = c[2]->shape();
  d.a_batch.assign(a.begin(), a.end() - 2);
  d.b_batch.assign(b.begin(), b.end() - 2);
  d.out_batch.assign(out->shape().begin(), out->shape().end() - 2);
  d.m = a[a.size() - 2];
  d.k = a.back();
  d.n = b.back();
  d.batch = num_elements(d.out_batch);
  d.act = *act_from_name(c[0]->sym);
  d.has_bias = is_f32(c[3]);
  return d;
}

int64_t tensor_bytes(const TensorType& t) {
  return num_elements(t.shape) * static_cast<int64_t>(dtype_size(t.dtype));
}

int64_t value_bytes(const ValueType& v) {
  switch (v.kind) {
    case Kind::Tensor: return tensor_bytes(v.tensor);
    case Kind::Tuple: {
      int64_t s = 0;
      for (const auto& t : v.tuple) s += tensor_bytes(t);
      return s;
    }
    default: return 0;
  }
}

bool transpose_moves_data(const std::vector<int64_t>& perm, const Shape& shape) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (shape[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return true;
    last = p;
  }
  return false;
}

bool is_free_node(Op op, const Children& c) {
  if (op_info(op).free) return true;
  if (op != Op::Transpose || c.size() != 2 || c[1]->kind != Kind::Tensor) return false;
  auto perm = parse_dims(*c[0]);
  return perm && perm->size() == c[1]->shape().size() && !transpose_moves_data(*perm, c[1]->shape());
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

}  // namespace tensat::cost
