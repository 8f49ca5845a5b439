// The roofline cost model: an analytic estimate for machines without a GPU.
//
//   time = max(flops / (peak_flops * compute_eff), bytes / (bandwidth * memory_eff))
//          + kernels * launch_ms
//
// Profiles (FP32 without tensor cores, as TASO measured; datasheet numbers):
//   t4    8.1 TFLOP/s,  320 GB/s   (the TENSAT paper's GPU; `--cost-model roofline
//                                   --device-profile t4` is the ablation)
//   v100  15.7 TFLOP/s, 900 GB/s   (SXM2)
//   a100  19.5 TFLOP/s, 1555 GB/s  (SXM4 40 GB)
//   h100  67 TFLOP/s,   3350 GB/s  (SXM5; the default profile, which has a measured table:
//                                   without a GPU its costs come from that table, not from here)
// Efficiency factors, the same for every profile: compute_eff 0.6 (cuDNN/cuBLAS FP32 reach
// 50-80% of peak on the layer sizes of the benchmark models), memory_eff 0.75 (streaming
// kernels reach 70-85% of datasheet bandwidth); launch_ms 0.005 (5 us per kernel: launch plus
// the minimum time of a tiny kernel). They rank alternatives; they do not predict absolute
// times to better than a factor of about 2.
//
// Work per operator (op_work): FLOPs and bytes read + written, f32 = 4 bytes:
//   conv    2*N*Cout*OH*OW*(Cin/groups)*KH*KW (+ N*Cout*OH*OW per bias and per activation);
//           bytes x + w + bias + y; 1 kernel (bias and relu fused), +1 kernel (reading and
//           writing y) for sigmoid/tanh and for a bias without activation (cudnnAddTensor),
//           +1 (x and padded x) for asymmetric pads
//   matmul  2*batch*M*N*K; bytes a + b + bias + out; +1 kernel (2*out bytes) for bias/act
//   ewadd/ewmul  out elements; a + b + out.  relu/tanh/sigmoid: n; 2n*4 bytes
//   pools   N*C*OH*OW*KH*KW; x + y
//   transpose, concat, split, enlarge, merge: 0 FLOPs; bytes read + written
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpu_cost/cost_model.h"

namespace tensat::cost {

struct DeviceProfile {
  std::string name;
  double peak_flops = 0;      ///< FP32 FLOP/s
  double bandwidth = 0;       ///< bytes/s
  double launch_ms = 0.005;   ///< per kernel
  double compute_eff = 0.6;
  double memory_eff = 0.75;
};

/// By name, case-insensitive ("t4", "v100", "a100", "h100"); nullptr if unknown.
const DeviceProfile* find_profile(std::string_view name);
/// The profile a CUDA device name names ("NVIDIA H100 80GB HBM3" -> h100, H200 -> h100), or
/// nullptr if it names none.
const DeviceProfile* match_profile(std::string_view device_name);
/// match_profile, else t4.
const DeviceProfile& profile_for_device(std::string_view device_name);
std::vector<std::string> profile_names();
std::string profile_list();  ///< "t4, v100, a100, h100"

struct Work {
  double flops = 0;
  double bytes = 0;
  int kernels = 0;  ///< kernel launches (the table model adds a launch overhead per kernel)
};

/// The work of a real kernel (structural_cost(op, c) is nullopt). Zero work for others.
Work op_work(Op op, const Children& c);
double roofline_ms(const Work& w, const DeviceProfile& p);

class RooflineModel : public CostModel {
 public:
  explicit RooflineModel(DeviceProfile p) : p_(std::move(p)) {}
  std::string name() const override { return "roofline:" + p_.name; }
  const DeviceProfile& profile() const { return p_; }

 protected:
  double kernel_cost(Op op, const Children& c, const std::string&) override {
    return roofline_ms(op_work(op, c), p_);
  }

 private:
  DeviceProfile p_;
};

}  // namespace tensat::cost
