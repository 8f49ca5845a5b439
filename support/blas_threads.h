// park_blas_threads(): stop OpenBLAS's idle worker threads, which otherwise busy-wait.
//
// OpenBLAS (the CPU reference executor's GEMM, and CLP's LAPACK) starts its worker threads when
// the library is loaded, and each worker spins on sched_yield for about 0.1 s (2^28 cycles) after
// its start and after every threaded call before it sleeps. On a 2-core machine that spin takes
// one core from the process's own second thread (the ILP's concurrent warm start) and from a
// parallel test run. Measured here: onnx-tensat on NasRNN, extract 0.0436 -> 0.0370 s (median of
// 11) with the spin gone.
#pragma once

namespace tensat {

/// Shuts OpenBLAS's worker threads down now; its next threaded call starts them again, so this
/// is safe whenever no BLAS call is running. A no-op when the BLAS in the process is not OpenBLAS.
/// Call it at the start of main() (after the libraries' constructors have started the workers).
void park_blas_threads();

}  // namespace tensat
