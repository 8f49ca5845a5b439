// onnx-tensat-gen OUTDIR [--only NAME[,NAME...]] [--seed N] [--batch N] [--list]
//
// Writes the TENSAT paper's benchmark graphs (bert, nasrnn, resnext50, nasneta, inceptionv3,
// squeezenet, vgg19, resnet50) as ONNX files: batch 1 (or --batch N), float32, ir_version 8, opset 13,
// random weights from a fixed seed. Each model's random stream is derived from the seed and
// the model's name, so `--only X` writes the same bytes as a full run.
//
// Exit status: 0 success, 2 usage error, 1 failure (build, check or write).
#include "testdata/gen/model_builder.h"
#include "testdata/gen/models.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "support/atomic_file.h"
#include "support/stopwatch.h"

#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kDefaultSeed = 2021;

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: onnx-tensat-gen OUTDIR [--only NAME[,NAME...]] [--seed N] [--batch N] [--list]\n"
               "  Writes the TENSAT benchmark graphs as OUTDIR/NAME.onnx (batch 1, float32,\n"
               "  random weights; default seed %" PRIu64 ").\n"
               "  --only NAME   only these models (repeatable or comma-separated)\n"
               "  --seed N      seed for the weights (unsigned 64-bit)\n"
               "  --batch N     batch size of the inputs (default 1; the weights do not change)\n"
               "  --list        list the model names and exit\n",
               kDefaultSeed);
}

uint64_t model_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the name, mixed with the seed
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return gen::Rng(seed ^ h).next();
}

// Writes to a temporary file next to the target, then renames it over the target.
void write_model(const onnx::ModelProto& model, const fs::path& path) {
  tensat::AtomicFile file(path.string());
  {
    google::protobuf::io::FileOutputStream out(file.fd());
    if (!model.SerializeToZeroCopyStream(&out) || !out.Flush())
      throw std::runtime_error("writing " + path.string() + " failed (disk full?)");
  }
  file.commit();
}

}  // namespace

int main(int argc, char** argv) {
  std::string outdir;
  std::set<std::string> only;
  uint64_t seed = kDefaultSeed;
  int64_t batch = 1;
  const auto& models = gen::all_models();
  auto known = [&](const std::string& n) {
    for (const auto& m : models)
      if (m.name == n) return true;
    return false;
  };

  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--list") {
      for (const auto& m : models) std::printf("%-12s %s\n", m.name.c_str(), m.summary.c_str());
      return 0;
    } else if (a == "--only" || a == "--seed" || a == "--batch") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "onnx-tensat-gen: %s needs a value\n", a.c_str());
        return 2;
      }
      std::string v = argv[++i];
      if (a == "--only") {
        size_t start = 0;
        while (start <= v.size()) {
          size_t end = v.find(',', start);
          if (end == std::string::npos) end = v.size();
          std::string n = v.substr(start, end - start);
          if (!known(n)) {
            std::fprintf(stderr, "onnx-tensat-gen: unknown model '%s' (try --list)\n", n.c_str());
            return 2;
          }
          only.insert(n);
          start = end + 1;
        }
      } else if (a == "--batch") {
        char* end = nullptr;
        errno = 0;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > 4096) {
          std::fprintf(stderr, "onnx-tensat-gen: --batch expects an integer from 1 to 4096, got '%s'\n", v.c_str());
          return 2;
        }
        batch = n;
      } else {
        char* end = nullptr;
        errno = 0;
        unsigned long long s = std::strtoull(v.c_str(), &end, 0);
        if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0) {
          std::fprintf(stderr, "onnx-tensat-gen: --seed expects an unsigned integer, got '%s'\n", v.c_str());
          return 2;
        }
        seed = s;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "onnx-tensat-gen: unknown option '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    } else if (outdir.empty()) {
      outdir = a;
    } else {
      std::fprintf(stderr, "onnx-tensat-gen: more than one OUTDIR given\n");
      return 2;
    }
  }
  if (outdir.empty()) {
    usage(stderr);
    return 2;
  }

  try {
    fs::create_directories(outdir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx-tensat-gen: cannot create %s: %s\n", outdir.c_str(), e.what());
    return 1;
  }

  std::printf("%-12s %6s %6s %7s %9s %12s %8s %8s\n", "model", "nodes", "convs", "matmuls", "weights", "weight MB",
              "build s", "write s");
  const tensat::Stopwatch t_all;
  for (const auto& m : models) {
    if (!only.empty() && !only.count(m.name)) continue;
    try {
      tensat::Stopwatch sw;
      gen::ModelBuilder b(m.name, model_seed(seed, m.name));
      b.set_batch(batch);
      b.set_doc(m.summary + "; generated by onnx-tensat-gen --seed " + std::to_string(seed) +
                (batch > 1 ? " --batch " + std::to_string(batch) : ""));
      m.build(b);
      const gen::ModelStats st = b.stats();
      onnx::ModelProto model = b.finish();
      const double t_build = sw.seconds();
      sw.restart();
      write_model(model, fs::path(outdir) / m.file);
      const double t_write = sw.seconds();
      std::printf("%-12s %6d %6d %7d %9" PRId64 " %12.1f %8.2f %8.2f\n", m.name.c_str(), st.nodes, st.count("Conv"),
                  st.count("MatMul"), st.weight_count, static_cast<double>(st.weight_bytes) / 1e6, t_build, t_write);
      std::fflush(stdout);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "onnx-tensat-gen: %s: %s\n", m.name.c_str(), e.what());
      return 1;
    }
  }
  std::printf("total %.2f s\n", t_all.seconds());
  return 0;
}
