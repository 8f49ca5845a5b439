#include "testdata/gen/models.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace gen {
namespace {

std::string dot(const std::string& a, const std::string& b) { return a + "." + b; }
std::string num(const std::string& prefix, int i) { return prefix + std::to_string(i); }

// A convolution with explicit kernel, stride (both axes), pads and groups.
ConvSpec conv_spec(int64_t cout, int64_t kh, int64_t kw, int64_t stride, const Pads& pads, bool relu,
                   int64_t groups = 1, float gain = 0.0f) {
  ConvSpec s;
  s.cout = cout;
  s.kh = kh;
  s.kw = kw;
  s.sh = stride;
  s.sw = stride;
  s.pads = pads;
  s.groups = groups;
  s.relu = relu;
  s.gain = gain;
  return s;
}

// A square convolution with "same" padding (k-1)/2.
ConvSpec same_conv(int64_t cout, int64_t k, int64_t stride, bool relu, int64_t groups = 1, float gain = 0.0f) {
  return conv_spec(cout, k, k, stride, same_pads(k, k), relu, groups, gain);
}

// ---------------------------------------------------------------------------------------------
// BERT (TENSAT bert.rs / TASO bert.py): 8 attention layers without softmax, layernorm,
// residual or FFN. Each layer's attention result is a graph output (TENSAT joins them with
// noop), and the next layer's input is x·W_linear of the current layer's input.
constexpr int64_t kSeq = 64, kHidden = 1024, kHeads = 16, kHeadDim = kHidden / kHeads;

}  // namespace

void build_bert(ModelBuilder& b) {
  // Batch B > 1: B sequences of kSeq tokens as [B*kSeq, kHidden]; the heads become
  // [B, kHeads, kSeq, kHeadDim] (attention within each sequence). B = 1 is the paper's graph.
  const int64_t B = b.batch();
  Tensor x = b.relu("input.relu", b.input("input", {B * kSeq, kHidden}));
  // W_q and W_v carry an extra 1/sqrt(64): the usual 1/sqrt(d_k) logit scaling folded into
  // W_q, and, with no softmax to normalise the 64-term sums of logits·v, the same factor in
  // W_v. The graph is unchanged; only the weights' scale keeps the outputs O(1).
  const float head_scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (int l = 0; l < 8; ++l) {
    const std::string p = num("layer", l);
    Tensor q = b.linear(dot(p, "q"), x, kHidden, false, head_scale);
    Tensor k = b.linear(dot(p, "k"), x, kHidden, false);
    Tensor v = b.linear(dot(p, "v"), x, kHidden, false, head_scale);
    auto heads = [&](const Tensor& t) {
      if (B > 1) {
        Tensor r = b.reshape(dot(t.name, "reshape"), t, {B, kSeq, kHeads, kHeadDim});
        return b.transpose(dot(t.name, "transpose"), r, {0, 2, 1, 3});  // [B, 16, 64, 64]
      }
      Tensor r = b.reshape(dot(t.name, "reshape"), t, {kSeq, kHeads, kHeadDim});
      return b.transpose(dot(t.name, "transpose"), r, {1, 0, 2});  // [16, 64, 64]
    };
    q = heads(q);
    k = heads(k);
    v = heads(v);
    // The paper's graph multiplies q by k without transposing k (both [16,64,64]); kept so.
    Tensor logits = b.matmul(dot(p, "qk"), q, k);
    Tensor attn = b.matmul(dot(p, "qkv"), logits, v);
    if (B > 1)
      attn = b.transpose(dot(p, "qkv.transpose"), attn, {0, 2, 1, 3});  // [B, 64, 16, 64]
    else
      attn = b.transpose(dot(p, "qkv.transpose"), attn, {1, 0, 2});  // [64, 16, 64]
    attn = b.reshape(dot(p, "attention"), attn, {B * kSeq, kHidden});
    b.output(attn);
    x = b.linear(dot(p, "linear"), x, kHidden, false);
  }
  b.output(x);
}

// ---------------------------------------------------------------------------------------------
// NasRNN (TENSAT nasrnn.rs / TASO nasrnn.py): 5 steps of the NAS recurrent cell, hidden 512.
void build_nasrnn(ModelBuilder& b) {
  constexpr int kSteps = 5;
  constexpr int64_t kH = 512;
  std::vector<Tensor> xs;
  for (int i = 0; i < kSteps; ++i) xs.push_back(b.input(num("x", i), {b.batch(), kH}));
  // Initial state: a weight, as in the paper; at batch B > 1 B copies of it (a weight-only
  // Concat), so the weights are the same at every batch size.
  Tensor h = b.weight("h0", {1, kH}, 1.0f);
  if (b.batch() > 1) h = b.concat("h0.batch", std::vector<Tensor>(static_cast<size_t>(b.batch()), h), 0);
  // x·W1 + h·W2: each weight with variance 1/(2·512) so that the sum has variance ~ E[x^2].
  const float gain = std::sqrt(0.5f);
  for (int s = 0; s < kSteps; ++s) {
    const std::string p = num("step", s);
    std::vector<Tensor> t;
    for (int j = 0; j < 8; ++j) {
      const std::string tj = dot(p, num("t", j));
      Tensor wx = b.linear(dot(tj, "wx"), xs[s], kH, false, gain);
      Tensor uh = b.linear(dot(tj, "uh"), h, kH, false, gain);
      t.push_back(b.add(tj, wx, uh));
    }
    auto relu = [&](const Tensor& v) { return b.relu(dot(v.name, "relu"), v); };
    auto sig = [&](const Tensor& v) { return b.sigmoid(dot(v.name, "sigmoid"), v); };
    auto tanh = [&](const Tensor& v) { return b.tanh(dot(v.name, "tanh"), v); };
    std::vector<Tensor> m;
    m.push_back(b.add(dot(p, "m0"), relu(t[0]), sig(t[3])));
    m.push_back(b.add(dot(p, "m1"), sig(t[1]), tanh(t[2])));
    m.push_back(b.mul(dot(p, "m2"), sig(t[4]), tanh(t[5])));
    m.push_back(b.mul(dot(p, "m3"), sig(t[6]), relu(t[7])));
    m.push_back(b.add(dot(p, "m4"), sig(m[1]), tanh(m[2])));
    m.push_back(b.mul(dot(p, "m5"), tanh(m[0]), tanh(m[3])));
    m.push_back(b.mul(dot(p, "m6"), tanh(m[4]), tanh(m[5])));
    h = b.tanh(dot(p, "h"), m[6]);
  }
  b.output(h);
}

namespace {

// Bottleneck block shared by ResNeXt-50 (TENSAT resnext50.rs) and ResNet-50 (TASO
// resnet50.py): 1x1 relu -> 3x3 (grouped) relu -> 1x1 (no act); a 1x1 projection with relu
// when stride or channels change; add; relu.
Tensor bottleneck(ModelBuilder& b, const std::string& p, const Tensor& x, int64_t mid, int64_t out, int64_t stride,
                  int64_t groups) {
  Tensor t = b.conv(dot(p, "conv1"), x, same_conv(mid, 1, 1, true));
  t = b.conv(dot(p, "conv2"), t, same_conv(mid, 3, stride, true, groups));
  // The last conv of the residual branch is scaled down (gain 1/4), as zero-init/"fixup"
  // style initialisation does without BatchNorm, so the sums do not grow over 16 blocks.
  t = b.conv(dot(p, "conv3"), t, same_conv(out, 1, 1, false, 1, 0.25f));
  Tensor shortcut = x;
  if (stride > 1 || x.dim(1) != out) shortcut = b.conv(dot(p, "proj"), x, same_conv(out, 1, stride, true));
  return b.relu(dot(p, "relu"), b.add(dot(p, "add"), shortcut, t));
}

// Stem shared by ResNeXt-50 and NasNet-A: conv 7x7/2 -> 64, relu; maxpool 3x3/2 ("same").
Tensor stem(ModelBuilder& b, const Tensor& x) {
  Tensor t = b.conv("stem.conv", x, same_conv(64, 7, 2, true));
  return b.maxpool("stem.pool", t, 3, 3, 2, 2, same_pads(3, 3));
}

}  // namespace

void build_resnext50(ModelBuilder& b) {
  Tensor t = stem(b, b.input("input", {b.batch(), 3, 224, 224}));
  const int blocks[4] = {3, 4, 6, 3};
  const int64_t widths[4] = {128, 256, 512, 1024};
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < blocks[s]; ++i) {
      const std::string p = num("stage", s + 1) + num(".block", i + 1);
      t = bottleneck(b, p, t, widths[s], 2 * widths[s], (s > 0 && i == 0) ? 2 : 1, /*groups=*/32);
    }
  b.output(t);
}

void build_resnet50(ModelBuilder& b) {
  Tensor t = b.input("input", {b.batch(), 64, 56, 56});
  const int blocks[4] = {3, 4, 6, 3};
  const int64_t widths[4] = {64, 128, 256, 512};
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < blocks[s]; ++i) {
      const std::string p = num("stage", s + 1) + num(".block", i + 1);
      t = bottleneck(b, p, t, widths[s], 4 * widths[s], (s > 0 && i == 0) ? 2 : 1, /*groups=*/1);
    }
  b.output(t);
}

// ---------------------------------------------------------------------------------------------
// NasNet-A (TENSAT nasneta.rs / TASO nasnet_a.py).
namespace {

// "squeeze": 1x1 conv + relu. Gain 1 (not sqrt 2): every cell output is a sum of two
// branches, so halving the second moment here keeps it O(1) across the 18 cells.
Tensor nas_squeeze(ModelBuilder& b, const std::string& name, const Tensor& x, int64_t c) {
  return b.conv(name, x, same_conv(c, 1, 1, true, 1, 1.0f));
}

// Brings `x` to cur's channels (and spatial size, with a 3x3/2 conv + relu, if it differs).
Tensor nas_fit(ModelBuilder& b, const std::string& name, const Tensor& cur, const Tensor& x) {
  if (x.dim(2) == cur.dim(2)) return nas_squeeze(b, name, x, cur.dim(1));
  return b.conv(name, x, same_conv(cur.dim(1), 3, 2, true, 1, 1.0f));
}

// Separable conv: depthwise kxk (groups = channels, no act) + 1x1 (no act).
Tensor sep_conv(ModelBuilder& b, const std::string& name, const Tensor& x, int64_t c, int64_t k, int64_t stride) {
  if (x.dim(1) != c) throw std::logic_error(name + ": separable conv expects matching channels");
  Tensor t = b.conv(dot(name, "dw"), x, same_conv(c, k, stride, false, /*groups=*/c));
  return b.conv(dot(name, "pw"), t, same_conv(c, 1, 1, false));
}

Tensor avg3(ModelBuilder& b, const std::string& name, const Tensor& x, int64_t stride) {
  return b.avgpool(name, x, 3, 3, stride, stride, same_pads(3, 3));
}
Tensor max3(ModelBuilder& b, const std::string& name, const Tensor& x, int64_t stride) {
  return b.maxpool(name, x, 3, 3, stride, stride, same_pads(3, 3));
}

Tensor normal_cell(ModelBuilder& b, const std::string& p, const Tensor& prev_in, const Tensor& cur_in, int64_t c) {
  Tensor cur = nas_squeeze(b, dot(p, "squeeze"), cur_in, c);
  Tensor prev = nas_fit(b, dot(p, "fit"), cur, prev_in);
  auto comb = [&](int i) { return dot(p, num("comb", i)); };
  std::vector<Tensor> outs;
  outs.push_back(b.add(comb(0), sep_conv(b, dot(comb(0), "left"), cur, c, 3, 1), cur));
  outs.push_back(b.add(comb(1), sep_conv(b, dot(comb(1), "left"), prev, c, 3, 1),
                       sep_conv(b, dot(comb(1), "right"), cur, c, 3, 1)));
  outs.push_back(b.add(comb(2), avg3(b, dot(comb(2), "left"), cur, 1), prev));
  // Two identical avgpools of prev, as in the paper's graph (merging them is the optimizer's job).
  outs.push_back(b.add(comb(3), avg3(b, dot(comb(3), "left"), prev, 1), avg3(b, dot(comb(3), "right"), prev, 1)));
  outs.push_back(b.add(comb(4), sep_conv(b, dot(comb(4), "left"), prev, c, 3, 1),
                       sep_conv(b, dot(comb(4), "right"), prev, c, 3, 1)));
  return b.concat(dot(p, "concat"), outs, 1);
}

Tensor reduction_cell(ModelBuilder& b, const std::string& p, const Tensor& prev_in, const Tensor& cur_in,
                      int64_t c) {
  Tensor cur = nas_squeeze(b, dot(p, "squeeze"), cur_in, c);
  Tensor prev = nas_fit(b, dot(p, "fit"), cur, prev_in);
  auto comb = [&](int i) { return dot(p, num("comb", i)); };
  std::vector<Tensor> outs;
  outs.push_back(b.add(comb(0), sep_conv(b, dot(comb(0), "left"), prev, c, 7, 2),
                       sep_conv(b, dot(comb(0), "right"), cur, c, 5, 2)));
  outs.push_back(b.add(comb(1), max3(b, dot(comb(1), "left"), cur, 2),
                       sep_conv(b, dot(comb(1), "right"), prev, c, 7, 2)));
  outs.push_back(b.add(comb(2), avg3(b, dot(comb(2), "left"), cur, 2),
                       sep_conv(b, dot(comb(2), "right"), prev, c, 5, 2)));
  outs.push_back(b.add(comb(3), max3(b, dot(comb(3), "left"), cur, 2),
                       sep_conv(b, dot(comb(3), "right"), outs[0], c, 3, 1)));
  outs.push_back(b.add(comb(4), avg3(b, dot(comb(4), "left"), outs[0], 1), outs[1]));
  return b.concat(dot(p, "concat"), outs, 1);
}

}  // namespace

void build_nasneta(ModelBuilder& b) {
  Tensor input = stem(b, b.input("input", {b.batch(), 3, 224, 224}));  // [1,64,56,56]
  int64_t c = 128;
  for (int s = 1; s <= 3; ++s) {
    const std::string stage = num("stage", s);
    Tensor prev = input, cur = input;
    for (int j = 1; j <= 5; ++j) {
      Tensor next = normal_cell(b, dot(stage, num("normal", j)), prev, cur, c);
      prev = cur;
      cur = next;
    }
    c *= 2;
    input = reduction_cell(b, dot(stage, "reduce"), prev, cur, c);
  }
  b.output(input);
}

// ---------------------------------------------------------------------------------------------
// Inception-v3 (TASO inceptionv3.py = torchvision's blocks without BatchNorm, conv + relu,
// no aux head, no dropout/FC). Padding: TASO's "VALID" where torchvision has padding 0 and a
// kernel larger than 1x1, otherwise "SAME", which equals torchvision's explicit pads here.
namespace {

Tensor basic(ModelBuilder& b, const std::string& name, const Tensor& x, int64_t cout, int64_t kh, int64_t kw,
             int64_t stride, int64_t ph, int64_t pw) {
  return b.conv(name, x, conv_spec(cout, kh, kw, stride, {ph, pw, ph, pw}, true));
}

Tensor inception_a(ModelBuilder& b, const std::string& p, const Tensor& x, int64_t pool_features) {
  Tensor b1 = basic(b, dot(p, "branch1x1"), x, 64, 1, 1, 1, 0, 0);
  Tensor b5 = basic(b, dot(p, "branch5x5_1"), x, 48, 1, 1, 1, 0, 0);
  b5 = basic(b, dot(p, "branch5x5_2"), b5, 64, 5, 5, 1, 2, 2);
  Tensor b3 = basic(b, dot(p, "branch3x3dbl_1"), x, 64, 1, 1, 1, 0, 0);
  b3 = basic(b, dot(p, "branch3x3dbl_2"), b3, 96, 3, 3, 1, 1, 1);
  b3 = basic(b, dot(p, "branch3x3dbl_3"), b3, 96, 3, 3, 1, 1, 1);
  Tensor bp = b.avgpool(dot(p, "avgpool"), x, 3, 3, 1, 1, same_pads(3, 3));
  bp = basic(b, dot(p, "branch_pool"), bp, pool_features, 1, 1, 1, 0, 0);
  return b.concat(dot(p, "concat"), {b1, b5, b3, bp}, 1);
}

Tensor inception_b(ModelBuilder& b, const std::string& p, const Tensor& x) {
  Tensor b3 = basic(b, dot(p, "branch3x3"), x, 384, 3, 3, 2, 0, 0);
  Tensor bd = basic(b, dot(p, "branch3x3dbl_1"), x, 64, 1, 1, 1, 0, 0);
  bd = basic(b, dot(p, "branch3x3dbl_2"), bd, 96, 3, 3, 1, 1, 1);
  bd = basic(b, dot(p, "branch3x3dbl_3"), bd, 96, 3, 3, 2, 0, 0);
  Tensor bp = b.maxpool(dot(p, "maxpool"), x, 3, 3, 2, 2, no_pads());
  return b.concat(dot(p, "concat"), {b3, bd, bp}, 1);
}

Tensor inception_c(ModelBuilder& b, const std::string& p, const Tensor& x, int64_t c7) {
  Tensor b1 = basic(b, dot(p, "branch1x1"), x, 192, 1, 1, 1, 0, 0);
  Tensor b7 = basic(b, dot(p, "branch7x7_1"), x, c7, 1, 1, 1, 0, 0);
  b7 = basic(b, dot(p, "branch7x7_2"), b7, c7, 1, 7, 1, 0, 3);
  b7 = basic(b, dot(p, "branch7x7_3"), b7, 192, 7, 1, 1, 3, 0);
  Tensor bd = basic(b, dot(p, "branch7x7dbl_1"), x, c7, 1, 1, 1, 0, 0);
  bd = basic(b, dot(p, "branch7x7dbl_2"), bd, c7, 7, 1, 1, 3, 0);
  bd = basic(b, dot(p, "branch7x7dbl_3"), bd, c7, 1, 7, 1, 0, 3);
  bd = basic(b, dot(p, "branch7x7dbl_4"), bd, c7, 7, 1, 1, 3, 0);
  bd = basic(b, dot(p, "branch7x7dbl_5"), bd, 192, 1, 7, 1, 0, 3);
  Tensor bp = b.avgpool(dot(p, "avgpool"), x, 3, 3, 1, 1, same_pads(3, 3));
  bp = basic(b, dot(p, "branch_pool"), bp, 192, 1, 1, 1, 0, 0);
  return b.concat(dot(p, "concat"), {b1, b7, bd, bp}, 1);
}

Tensor inception_d(ModelBuilder& b, const std::string& p, const Tensor& x) {
  Tensor b3 = basic(b, dot(p, "branch3x3_1"), x, 192, 1, 1, 1, 0, 0);
  b3 = basic(b, dot(p, "branch3x3_2"), b3, 320, 3, 3, 2, 0, 0);
  Tensor b7 = basic(b, dot(p, "branch7x7x3_1"), x, 192, 1, 1, 1, 0, 0);
  b7 = basic(b, dot(p, "branch7x7x3_2"), b7, 192, 1, 7, 1, 0, 3);
  b7 = basic(b, dot(p, "branch7x7x3_3"), b7, 192, 7, 1, 1, 3, 0);
  b7 = basic(b, dot(p, "branch7x7x3_4"), b7, 192, 3, 3, 2, 0, 0);
  Tensor bp = b.maxpool(dot(p, "maxpool"), x, 3, 3, 2, 2, no_pads());
  return b.concat(dot(p, "concat"), {b3, b7, bp}, 1);
}

Tensor inception_e(ModelBuilder& b, const std::string& p, const Tensor& x) {
  Tensor b1 = basic(b, dot(p, "branch1x1"), x, 320, 1, 1, 1, 0, 0);
  Tensor b3 = basic(b, dot(p, "branch3x3_1"), x, 384, 1, 1, 1, 0, 0);
  Tensor b3a = basic(b, dot(p, "branch3x3_2a"), b3, 384, 1, 3, 1, 0, 1);
  Tensor b3b = basic(b, dot(p, "branch3x3_2b"), b3, 384, 3, 1, 1, 1, 0);
  Tensor bd = basic(b, dot(p, "branch3x3dbl_1"), x, 448, 1, 1, 1, 0, 0);
  bd = basic(b, dot(p, "branch3x3dbl_2"), bd, 384, 3, 3, 1, 1, 1);
  Tensor bda = basic(b, dot(p, "branch3x3dbl_3a"), bd, 384, 1, 3, 1, 0, 1);
  Tensor bdb = basic(b, dot(p, "branch3x3dbl_3b"), bd, 384, 3, 1, 1, 1, 0);
  Tensor bp = b.avgpool(dot(p, "avgpool"), x, 3, 3, 1, 1, same_pads(3, 3));
  bp = basic(b, dot(p, "branch_pool"), bp, 192, 1, 1, 1, 0, 0);
  return b.concat(dot(p, "concat"), {b1, b3a, b3b, bda, bdb, bp}, 1);
}

}  // namespace

void build_inceptionv3(ModelBuilder& b) {
  Tensor v = b.input("input", {b.batch(), 3, 299, 299});
  v = basic(b, "stem.conv1", v, 32, 3, 3, 2, 0, 0);  // 32 x 149 x 149
  v = basic(b, "stem.conv2", v, 32, 3, 3, 1, 0, 0);  // 32 x 147 x 147
  v = basic(b, "stem.conv3", v, 64, 3, 3, 1, 1, 1);  // 64 x 147 x 147
  v = b.maxpool("stem.pool1", v, 3, 3, 2, 2, no_pads());  // 64 x 73 x 73
  v = basic(b, "stem.conv4", v, 80, 1, 1, 1, 0, 0);  // 80 x 73 x 73
  v = basic(b, "stem.conv5", v, 192, 3, 3, 1, 0, 0);  // 192 x 71 x 71
  v = b.maxpool("stem.pool2", v, 3, 3, 2, 2, no_pads());  // 192 x 35 x 35
  v = inception_a(b, "mixed5b", v, 32);
  v = inception_a(b, "mixed5c", v, 64);
  v = inception_a(b, "mixed5d", v, 64);  // 288 x 35 x 35
  v = inception_b(b, "mixed6a", v);      // 768 x 17 x 17
  v = inception_c(b, "mixed6b", v, 128);
  v = inception_c(b, "mixed6c", v, 160);
  v = inception_c(b, "mixed6d", v, 160);
  v = inception_c(b, "mixed6e", v, 192);
  v = inception_d(b, "mixed7a", v);  // 1280 x 8 x 8
  v = inception_e(b, "mixed7b", v);
  v = inception_e(b, "mixed7c", v);  // 2048 x 8 x 8
  v = b.avgpool("avgpool", v, 8, 8, 1, 1, no_pads());  // 2048 x 1 x 1
  b.output(v);
}

// ---------------------------------------------------------------------------------------------
// SqueezeNet 1.1 (as in TENSAT's model/squeezenet.model, exported from torchvision, minus
// biases and dropout).
namespace {

Tensor fire(ModelBuilder& b, const std::string& p, const Tensor& x, int64_t squeeze, int64_t expand) {
  Tensor s = b.conv(dot(p, "squeeze"), x, same_conv(squeeze, 1, 1, true));
  Tensor e1 = b.conv(dot(p, "expand1x1"), s, same_conv(expand, 1, 1, true));
  Tensor e3 = b.conv(dot(p, "expand3x3"), s, same_conv(expand, 3, 1, true));
  return b.concat(dot(p, "concat"), {e1, e3}, 1);
}

}  // namespace

void build_squeezenet(ModelBuilder& b) {
  Tensor v = b.input("input", {b.batch(), 3, 224, 224});
  v = b.conv("conv1", v, conv_spec(64, 3, 3, 2, no_pads(), true));  // 64 x 111 x 111
  v = b.maxpool("pool1", v, 3, 3, 2, 2, no_pads());                   // 55 x 55
  v = fire(b, "fire2", v, 16, 64);
  v = fire(b, "fire3", v, 16, 64);
  v = b.maxpool("pool3", v, 3, 3, 2, 2, no_pads());  // 27 x 27
  v = fire(b, "fire4", v, 32, 128);
  v = fire(b, "fire5", v, 32, 128);
  v = b.maxpool("pool5", v, 3, 3, 2, 2, no_pads());  // 13 x 13
  v = fire(b, "fire6", v, 48, 192);
  v = fire(b, "fire7", v, 48, 192);
  v = fire(b, "fire8", v, 64, 256);
  v = fire(b, "fire9", v, 64, 256);
  v = b.conv("conv10", v, same_conv(1000, 1, 1, true));  // 1000 x 13 x 13
  v = b.avgpool("avgpool", v, 13, 13, 1, 1, no_pads());  // 1000 x 1 x 1
  v = b.reshape("flatten", v, {b.batch(), 1000});
  b.output(v);
}

// ---------------------------------------------------------------------------------------------
// VGG-19 (as in TENSAT's model/vgg.model, minus biases and dropout; the FC layers are
// x·W with W stored [in, out], where the ONNX export had Transpose(W) + MatMul).
void build_vgg19(ModelBuilder& b) {
  Tensor v = b.input("input", {b.batch(), 3, 224, 224});
  const int convs[5] = {2, 2, 4, 4, 4};
  const int64_t widths[5] = {64, 128, 256, 512, 512};
  for (int s = 0; s < 5; ++s) {
    for (int i = 0; i < convs[s]; ++i)
      v = b.conv("conv" + std::to_string(s + 1) + "_" + std::to_string(i + 1), v, same_conv(widths[s], 3, 1, true));
    v = b.maxpool(num("pool", s + 1), v, 2, 2, 2, 2, no_pads());
  }
  v = b.reshape("flatten", v, {b.batch(), 25088});
  v = b.linear("fc6", v, 4096, true);
  v = b.linear("fc7", v, 4096, true);
  v = b.linear("fc8", v, 1000, false);
  b.output(v);
}

// ---------------------------------------------------------------------------------------------
// DenseNet-121 (torchvision densenet121, as torch.onnx.export writes it in eval mode, opset 13):
// a BatchNorm that follows a convolution is folded into its bias by the export; the one after
// each concatenation (the pre-activation of a dense layer or transition) stays.
void build_densenet(ModelBuilder& b) {
  Tensor x = b.input("input", {1, 3, 224, 224});
  ConvSpec stem = conv_spec(64, 7, 7, 2, {3, 3, 3, 3}, true);
  stem.bias = true;  // norm0, folded
  x = b.conv("features.conv0", x, stem);
  x = b.maxpool("features.pool0", x, 3, 3, 2, 2, {1, 1, 1, 1});
  const int layers[4] = {6, 12, 24, 16};
  constexpr int64_t kGrowth = 32, kBottleneck = 4 * kGrowth;
  for (int bi = 0; bi < 4; ++bi) {
    const std::string blk = num("features.denseblock", bi + 1);
    std::vector<Tensor> feats{x};
    for (int l = 0; l < layers[bi]; ++l) {
      const std::string p = dot(blk, num("denselayer", l + 1));
      // Every layer reads the concatenation of all the block's earlier features.
      Tensor cat = feats.size() == 1 ? feats[0] : b.concat(dot(p, "cat"), feats, 1);
      Tensor h = b.relu(dot(p, "relu1"), b.batchnorm(dot(p, "norm1"), cat));
      ConvSpec c1 = same_conv(kBottleneck, 1, 1, true);
      c1.bias = true;  // norm2, folded
      h = b.conv(dot(p, "conv1"), h, c1);
      feats.push_back(b.conv(dot(p, "conv2"), h, same_conv(kGrowth, 3, 1, false)));
    }
    x = b.concat(dot(blk, "cat"), feats, 1);
    if (bi < 3) {
      const std::string t = num("features.transition", bi + 1);
      Tensor h = b.relu(dot(t, "relu"), b.batchnorm(dot(t, "norm"), x));
      h = b.conv(dot(t, "conv"), h, same_conv(x.dim(1) / 2, 1, 1, false));
      x = b.avgpool(dot(t, "pool"), h, 2, 2, 2, 2, no_pads());
    }
  }
  x = b.relu("features.relu5", b.batchnorm("features.norm5", x));
  x = b.avgpool("avgpool", x, 7, 7, 1, 1, no_pads());
  x = b.reshape("flatten", x, {1, 1024});
  b.output(b.linear("classifier", x, 1000, false));
}

const std::vector<ModelDef>& all_models() {
  static const std::vector<ModelDef> models = {
      {"bert", "bert.onnx",
       "BERT (TENSAT/TASO): input [64,1024], relu, 8 attention layers (no softmax/layernorm/residual/FFN), "
       "48 matmuls; outputs: each layer's attention and the last x*W_linear",
       build_bert},
      {"nasrnn", "nasrnn.onnx",
       "NasRNN (TENSAT/TASO): 5 steps of the NAS recurrent cell, hidden 512, 80 matmuls; output: final state",
       build_nasrnn},
      {"resnext50", "resnext50.onnx",
       "ResNeXt-50 32x4d-style (TENSAT/TASO): input [1,3,224,224], no BatchNorm, no head, 53 convs",
       build_resnext50},
      {"nasneta", "nasneta.onnx",
       "NasNet-A (TENSAT/TASO): ResNeXt stem, 3 x (5 normal + 1 reduction cell), 217 convs", build_nasneta},
      {"inceptionv3", "inceptionv3.onnx",
       "Inception-v3 (TASO): torchvision blocks without BatchNorm, conv+relu, avgpool 8x8, no FC, 94 convs",
       build_inceptionv3},
      {"squeezenet", "squeezenet.onnx",
       "SqueezeNet 1.1 (TENSAT): no biases, no dropout, conv10 + relu + avgpool 13x13 + reshape [1,1000]",
       build_squeezenet},
      {"vgg19", "vgg19.onnx", "VGG-19 (TENSAT): 16 convs + relu, 5 maxpools, 3 FC (no biases, no dropout)",
       build_vgg19},
      {"resnet50", "resnet50.onnx",
       "ResNet-50 (TASO resnet50.py): input [1,64,56,56], no stem, bottlenecks 3/4/6/3, no BatchNorm, no head",
       build_resnet50},
      {"densenet", "densenet.onnx",
       "DenseNet-121 (torchvision export, eval): dense blocks 6/12/24/16 (growth 32), each layer a concat of "
       "all earlier features -> BatchNorm -> relu -> 1x1 -> relu -> 3x3; 120 convs, 61 BatchNorms",
       build_densenet},
  };
  return models;
}

}  // namespace gen
