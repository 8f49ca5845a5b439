// Model-sized benchmarks of the reference executor: VGG-19 (1x3x224x224) and Inception-v3
// (1x3x299x299, torchvision layout, BatchNorm folded into conv biases) with random weights.
// DISABLED_ so the normal suite stays fast; run them with
//   test_refexec --gtest_also_run_disabled_tests --gtest_filter='*Bench*'
// They print wall times and peak memory; nothing is asserted about time.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "test_util.h"

namespace tensat::refexec::testing {
namespace {

// Builds a conv net into a graph, with random He-uniform weights in a WeightStore.
struct NetBuilder {
  ir::Graph g;
  WeightStore w;
  int count = 0;

  ir::NodeId weight(const Shape& s, int64_t fan_in) {
    std::string name = "w" + std::to_string(count++);
    float lim = std::sqrt(6.0f / static_cast<float>(fan_in));
    w.put_f32(name, s, random_tensor(s, static_cast<uint64_t>(count), -lim, lim).data);
    return g.weight(name, TensorType{DType::F32, s});
  }
  const Shape& shape(ir::NodeId x) const { return g.type(x).shape(); }

  ir::NodeId conv(ir::NodeId x, int64_t cout, int64_t kh, int64_t kw, int64_t stride = 1,
                  const std::string& pad = "same", const std::string& act = "relu") {
    int64_t cin = shape(x)[1];
    ir::NodeId wt = weight({cout, cin, kh, kw}, cin * kh * kw);
    ir::NodeId b = weight({cout}, cin * kh * kw);
    return g.op(Op::Conv, {g.num(stride), g.num(stride), g.sym(pad), g.sym(act), x, wt, b});
  }
  ir::NodeId maxpool(ir::NodeId x, int64_t k, int64_t s, const std::string& pad = "valid") {
    return g.op(Op::Poolmax, {g.num(k), g.num(k), g.num(s), g.num(s), g.sym(pad), x});
  }
  ir::NodeId avgpool(ir::NodeId x, int64_t k, int64_t s, const std::string& pad, int cip) {
    return g.op(Op::Poolavg, {g.num(k), g.num(k), g.num(s), g.num(s), g.sym(pad), g.num(cip), x});
  }
  ir::NodeId concat(const std::vector<ir::NodeId>& xs) {
    ir::NodeId acc = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) acc = g.op(Op::Concat, {g.num(1), acc, xs[i]});
    return acc;
  }
  ir::NodeId fc(ir::NodeId x, int64_t n, const std::string& act) {
    int64_t k = shape(x).back();
    return g.op(Op::Matmul, {g.sym(act), x, weight({k, n}, k), weight({n}, k)});
  }
  ir::NodeId flatten(ir::NodeId x) {
    return g.op(Op::Reshape, {g.sym("1_" + std::to_string(num_elements(shape(x)))), x});
  }
};

ir::NodeId build_vgg19(NetBuilder& b) {
  ir::NodeId x = b.g.input("data", TensorType{DType::F32, {1, 3, 224, 224}});
  const int64_t cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0,
                         512, 512, 512, 512, 0, 512, 512, 512, 512, 0};
  for (int64_t c : cfg) x = c ? b.conv(x, c, 3, 3) : b.maxpool(x, 2, 2);
  x = b.flatten(x);
  x = b.fc(x, 4096, "relu");
  x = b.fc(x, 4096, "relu");
  return b.fc(x, 1000, "none");
}

ir::NodeId build_inception_v3(NetBuilder& b) {
  ir::NodeId x = b.g.input("data", TensorType{DType::F32, {1, 3, 299, 299}});
  x = b.conv(x, 32, 3, 3, 2, "valid");
  x = b.conv(x, 32, 3, 3, 1, "valid");
  x = b.conv(x, 64, 3, 3);
  x = b.maxpool(x, 3, 2);
  x = b.conv(x, 80, 1, 1);
  x = b.conv(x, 192, 3, 3, 1, "valid");
  x = b.maxpool(x, 3, 2);
  auto pool_branch = [&](ir::NodeId in, int64_t c) { return b.conv(b.avgpool(in, 3, 1, "same", 0), c, 1, 1); };
  for (int64_t pf : {32, 64, 64}) {  // InceptionA
    ir::NodeId b1 = b.conv(x, 64, 1, 1);
    ir::NodeId b5 = b.conv(b.conv(x, 48, 1, 1), 64, 5, 5);
    ir::NodeId b3 = b.conv(b.conv(b.conv(x, 64, 1, 1), 96, 3, 3), 96, 3, 3);
    x = b.concat({b1, b5, b3, pool_branch(x, pf)});
  }
  {  // InceptionB
    ir::NodeId b3 = b.conv(x, 384, 3, 3, 2, "valid");
    ir::NodeId bd = b.conv(b.conv(b.conv(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, 2, "valid");
    x = b.concat({b3, bd, b.maxpool(x, 3, 2)});
  }
  for (int64_t c7 : {128, 160, 160, 192}) {  // InceptionC: 1x7 / 7x1 factorized convs
    ir::NodeId b1 = b.conv(x, 192, 1, 1);
    ir::NodeId b7 = b.conv(b.conv(b.conv(x, c7, 1, 1), c7, 1, 7), 192, 7, 1);
    ir::NodeId bd = b.conv(x, c7, 1, 1);
    bd = b.conv(b.conv(bd, c7, 7, 1), c7, 1, 7);
    bd = b.conv(b.conv(bd, c7, 7, 1), 192, 1, 7);
    x = b.concat({b1, b7, bd, pool_branch(x, 192)});
  }
  {  // InceptionD
    ir::NodeId b3 = b.conv(b.conv(x, 192, 1, 1), 320, 3, 3, 2, "valid");
    ir::NodeId b7 = b.conv(b.conv(b.conv(x, 192, 1, 1), 192, 1, 7), 192, 7, 1);
    b7 = b.conv(b7, 192, 3, 3, 2, "valid");
    x = b.concat({b3, b7, b.maxpool(x, 3, 2)});
  }
  for (int i = 0; i < 2; ++i) {  // InceptionE
    ir::NodeId b1 = b.conv(x, 320, 1, 1);
    ir::NodeId b3 = b.conv(x, 384, 1, 1);
    b3 = b.concat({b.conv(b3, 384, 1, 3), b.conv(b3, 384, 3, 1)});
    ir::NodeId bd = b.conv(b.conv(x, 448, 1, 1), 384, 3, 3);
    bd = b.concat({b.conv(bd, 384, 1, 3), b.conv(bd, 384, 3, 1)});
    x = b.concat({b1, b3, bd, pool_branch(x, 192)});
  }
  x = b.avgpool(x, 8, 1, "valid", 0);
  return b.fc(b.flatten(x), 1000, "none");
}

// Peak resident memory of this process (VmHWM), in MiB; 0 if unknown.
long peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  return 0;
}

void bench(const char* name, ir::NodeId (*build)(NetBuilder&), const Shape& in_shape) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  NetBuilder b;
  ir::NodeId root = build(b);
  b.g.set_root(root);
  Inputs in{{"data", random_tensor(in_shape, 99)}};
  auto t1 = clock::now();
  std::printf("[bench] %s: %zu nodes, %.1f MB weights, built in %.2f s\n", name, b.g.size(),
              static_cast<double>(b.w.total_bytes()) / 1e6,
              std::chrono::duration<double>(t1 - t0).count());
  for (int rep = 0; rep < 3; ++rep) {
    auto s = clock::now();
    RunResult r = run(b.g, b.w, in);
    double secs = std::chrono::duration<double>(clock::now() - s).count();
    ASSERT_EQ(r.outputs.size(), 1u);
    ASSERT_EQ(r.outputs[0].shape, (Shape{1, 1000}));
    double sum = 0;
    for (float v : r.outputs[0].data) {
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
    }
    std::printf("[bench] %s run %d: %.3f s (output sum %.6g), peak RSS %ld MiB\n", name, rep, secs,
                sum, peak_rss_mib());
  }
}

TEST(RefexecBench, DISABLED_Vgg19) { bench("vgg19", build_vgg19, {1, 3, 224, 224}); }
TEST(RefexecBench, DISABLED_InceptionV3) {
  bench("inception_v3", build_inception_v3, {1, 3, 299, 299});
}

}  // namespace
}  // namespace tensat::refexec::testing
