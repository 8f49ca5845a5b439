// The GPU runtime and kernels of a build without the CUDA toolkit (TENSAT_WITH_CUDA=OFF, or
// AUTO on a machine without nvcc/cuDNN): no device is ever found, so `--cost-model auto`
// means the table or roofline model and `--verify auto` the CPU reference executor. Anything
// that asks for the GPU anyway throws GpuError saying why. Compiled instead of the .cu files.
#include "gpu_cost/gpu_opaque.h"
#include "gpu_cost/gpu_ops.h"
#include "gpu_cost/gpu_runtime.h"

namespace tensat::gpu {

struct ContextImpl {};

namespace {
[[noreturn]] void no_cuda() {
  throw GpuError("this onnx-tensat was built without CUDA (TENSAT_WITH_CUDA=OFF or no CUDA toolkit at build time)");
}
}  // namespace

int device_count() { return 0; }
std::string cublas_library() { no_cuda(); }

Context::Context(bool) { no_cuda(); }
Context::~Context() = default;
const std::string& Context::device_name() const { no_cuda(); }
size_t Context::free_memory() const { no_cuda(); }
bool Context::allow_tf32() const { no_cuda(); }
void Context::synchronize() { no_cuda(); }
uint64_t Context::workspace_generation() const { no_cuda(); }
double Context::median_time_ms(const std::function<void()>&, int, int) { no_cuda(); }
std::vector<double> Context::latency_samples_ms(const std::function<void()>&, int, int) { no_cuda(); }
std::vector<double> Context::back_to_back_samples_ms(const std::function<void()>&, int, int) { no_cuda(); }
std::vector<std::vector<double>> Context::step_samples_ms(int, const std::function<void(int)>&, int, int, bool,
                                                          std::string*) {
  no_cuda();
}

struct CudaGraph::Impl {};
CudaGraph::CudaGraph(Context& ctx, const std::function<void()>&) : ctx_(ctx) { no_cuda(); }
CudaGraph::~CudaGraph() = default;
void CudaGraph::launch() { no_cuda(); }
size_t CudaGraph::nodes() const { no_cuda(); }
bool CudaGraph::relaxed() const { no_cuda(); }
LaunchOverhead measure_launch_overhead(Context&, int, int) { no_cuda(); }

DeviceBuffer::DeviceBuffer(size_t) { no_cuda(); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

void upload(Context&, void*, const void*, size_t) { no_cuda(); }
void download(Context&, void*, const void*, size_t) { no_cuda(); }
void fill_zero(Context&, void*, size_t) { no_cuda(); }
void fill_random(Context&, float*, size_t, uint64_t) { no_cuda(); }

std::unique_ptr<Kernel> prepare(Context&, Op, const Children&) { no_cuda(); }
OpTiming time_op(Context&, Op, const Children&, int, int) { no_cuda(); }
bool cold_weights() { return true; }
std::string measurement_variant() { return {}; }
double measure_op(Context&, Op, const Children&, int, int) { no_cuda(); }
std::unique_ptr<Kernel> prepare_opaque(Context&, const exec::opaque::Decoded&, const TensorType&) { no_cuda(); }
int opaque_launches(const exec::opaque::Decoded&) { return 1; }

}  // namespace tensat::gpu
