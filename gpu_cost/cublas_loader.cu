// cuBLAS opened at run time (see cublas_loader.cuh).
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "gpu_cost/cublas_loader.cuh"
#include "gpu_cost/gpu_runtime.h"

namespace tensat::gpu {

namespace {

#define TENSAT_NAME_OF(f) TENSAT_NAME_OF_EXPANDED(f)
#define TENSAT_NAME_OF_EXPANDED(f) #f

std::string library_name() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

CublasApi load() {
  const std::string lib = library_name();
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    throw GpuError("cannot open cuBLAS (" + lib + "): " + (e ? e : "unknown dlopen error") +
                   "; it comes with the CUDA toolkit or the nvidia-cublas wheel");
  }
  CublasApi api;
  auto find = [&](auto& fn, const char* name) {
    dlerror();
    void* p = dlsym(h, name);
    if (!p) {
      const char* e = dlerror();
      const std::string why = e ? std::string(": ") + e : std::string();
      dlclose(h);
      throw GpuError("cuBLAS (" + lib + ") has no function " + name + why);
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  // cublas_v2.h's macros map each name to the symbol the headers were written for.
  find(api.create, TENSAT_NAME_OF(cublasCreate));
  find(api.destroy, TENSAT_NAME_OF(cublasDestroy));
  find(api.set_stream, TENSAT_NAME_OF(cublasSetStream));
  find(api.set_math_mode, TENSAT_NAME_OF(cublasSetMathMode));
  find(api.set_workspace, TENSAT_NAME_OF(cublasSetWorkspace));
  find(api.sgemm, TENSAT_NAME_OF(cublasSgemm));
  find(api.sgemm_strided_batched, TENSAT_NAME_OF(cublasSgemmStridedBatched));
  Dl_info info{};
  api.path = dladdr(reinterpret_cast<void*>(api.create), &info) && info.dli_fname ? info.dli_fname : lib;
  return api;
}

#undef TENSAT_NAME_OF
#undef TENSAT_NAME_OF_EXPANDED

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = load();
  return api;
}

std::string cublas_library() { return cublas_api().path; }

}  // namespace tensat::gpu
