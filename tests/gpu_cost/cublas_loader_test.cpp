// cuBLAS is opened at run time, not linked (gpu_cost/cublas_loader.cuh): with CUDA built in, it
// is found and has every function the executor calls, without a GPU; without CUDA, asking for
// it says so. (ctest's gpu_cost.cublas_opened_not_linked checks that no binary links it.)
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "gpu_cost/gpu_runtime.h"

namespace tensat::gpu {
namespace {

TEST(CublasLoader, OpensCublasWithEveryFunctionWithoutADevice) {
#ifdef TENSAT_HAVE_CUDA
  const std::string path = cublas_library();
  std::printf("cuBLAS opened: %s\n", path.c_str());  // (in the GPU machine's gpu-env.log)
  EXPECT_NE(path.find("libcublas.so."), std::string::npos) << path;
  // Loaded by the call above (RTLD_NOLOAD opens nothing that is not loaded already).
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(h, nullptr) << path;
  if (h) dlclose(h);
  EXPECT_EQ(cublas_library(), path);  // the same answer again
#else
  EXPECT_THROW(cublas_library(), GpuError);
#endif
}

}  // namespace
}  // namespace tensat::gpu
