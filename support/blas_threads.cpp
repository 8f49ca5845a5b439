#include "support/blas_threads.h"

// OpenBLAS's own shutdown (the one its fork handler runs): exported by libopenblas, declared
// nowhere public. Weak, so that a process without OpenBLAS links and runs, and gets nullptr.
extern "C" int blas_thread_shutdown_() __attribute__((weak));

namespace tensat {

void park_blas_threads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

}  // namespace tensat
