// Roofline cost model: device profiles and per-operator work (see roofline.h).
#include "gpu_cost/roofline.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "gpu_cost/op_params.h"

namespace tensat::cost {

namespace {

const std::array<DeviceProfile, 5>& profiles() {
  static const std::array<DeviceProfile, 5> kProfiles = {{
      {"t4", 8.1e12, 320e9},
      {"v100", 15.7e12, 900e9},
      {"a100", 19.5e12, 1555e9},
      {"h100", 67e12, 3350e9},
      {"h200", 67e12, 4800e9},  // the H100's SMs with HBM3e
  }};
  return kProfiles;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

double elems(const Shape& s) { return static_cast<double>(num_elements(s)); }
double bytes(const ValueType* v) { return static_cast<double>(value_bytes(*v)); }

}  // namespace

const DeviceProfile* find_profile(std::string_view name) {
  std::string n = lower(name);
  for (const auto& p : profiles())
    if (p.name == n) return &p;
  return nullptr;
}

const DeviceProfile* match_profile(std::string_view device_name) {
  std::string n = lower(device_name);
  for (const auto& p : profiles())
    if (n.find(p.name) != std::string::npos) return &p;
  return nullptr;
}

const DeviceProfile& profile_for_device(std::string_view device_name) {
  const DeviceProfile* p = match_profile(device_name);
  return p ? *p : profiles()[0];
}

std::vector<std::string> profile_names() {
  std::vector<std::string> v;
  for (const auto& p : profiles()) v.push_back(p.name);
  return v;
}

std::string profile_list() {
  std::string s;
  for (const auto& p : profiles()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

Work op_work(Op op, const Children& c) {
  Work w;
  auto out = output_type(op, c);
  if (!out || structural_cost(op, c)) return w;
  double out_bytes = static_cast<double>(value_bytes(*out));
  double out_elems = out->kind == Kind::Tensor ? elems(out->shape()) : 0;
  w.kernels = 1;
  switch (op) {
    case Op::Conv: {
      auto d = *conv_desc(c);
      w.flops = 2.0 * d.n * d.cout * d.oh * d.ow * d.cin_per_group * d.kh * d.kw;
      if (d.has_bias) w.flops += out_elems;
      if (d.act != Act::None) w.flops += out_elems;
      w.bytes = bytes(c[4]) + bytes(c[5]) + (d.has_bias ? bytes(c[6]) : 0) + out_bytes;
      // cuDNN fuses relu only: a bias without activation (the executor's conv_fused path needs
      // an activation) or any other activation is a second (bias + activation) kernel.
      if ((d.act != Act::None && d.act != Act::Relu) || (d.has_bias && d.act == Act::None)) {
        w.kernels += 1;
        w.bytes += 2 * out_bytes;
      }
      if (!d.symmetric_pads()) {
        w.kernels += 1;
        w.bytes += bytes(c[4]) + 4.0 * d.n * d.cin * (d.h + d.pads.top + d.pads.bottom) * (d.w + d.pads.left + d.pads.right);
      }
      break;
    }
    case Op::Matmul: {
      auto d = *matmul_desc(c);
      w.flops = 2.0 * d.batch * d.m * d.n * d.k;
      w.bytes = bytes(c[1]) + bytes(c[2]) + out_bytes;
      if (d.has_bias || d.act != Act::None) {
        w.flops += out_elems * ((d.has_bias ? 1 : 0) + (d.act != Act::None ? 1 : 0));
        w.bytes += 2 * out_bytes + (d.has_bias ? bytes(c[3]) : 0);
        w.kernels += 1;
      }
      break;
    }
    case Op::Ewadd:
    case Op::Ewmul:
      w.flops = out_elems;
      w.bytes = bytes(c[0]) + bytes(c[1]) + out_bytes;
      break;
    case Op::Relu:
    case Op::Tanh:
    case Op::Sigmoid:
      w.flops = out_elems;
      w.bytes = bytes(c[0]) + out_bytes;
      break;
    case Op::Act:
      w.flops = out_elems;
      w.bytes = bytes(c[1]) + out_bytes;
      break;
    case Op::Poolmax:
    case Op::Poolavg: {
      auto d = *pool_desc(op, c);
      w.flops = static_cast<double>(d.n) * d.c * d.oh * d.ow * d.kh * d.kw;
      w.bytes = bytes(c[op == Op::Poolmax ? 5 : 6]) + out_bytes;
      break;
    }
    case Op::Transpose: w.bytes = bytes(c[1]) + out_bytes; break;
    case Op::Concat: w.bytes = bytes(c[1]) + bytes(c[2]) + out_bytes; break;
    case Op::Split: w.bytes = bytes(c[2]) + out_bytes; break;
    case Op::Enlarge: w.bytes = bytes(c[0]) + out_bytes; break;
    case Op::Merge: w.bytes = bytes(c[1]) + out_bytes; break;
    default: w.bytes = out_bytes; break;
  }
  return w;
}

double roofline_ms(const Work& w, const DeviceProfile& p) {
  if (w.kernels == 0) return 0.0;
  double compute_s = w.flops / (p.peak_flops * p.compute_eff);
  double memory_s = w.bytes / (p.bandwidth * p.memory_eff);
  return std::max(compute_s, memory_s) * 1e3 + w.kernels * p.launch_ms;
}

}  // namespace tensat::cost
