// Arena planning: one device allocation for every intermediate value of a graph, with
// offsets chosen from the values' lifetimes, so nothing is allocated while a model runs (or is
// timed) and memory is reused as soon as a value is dead.
//
// Plain C++ (no CUDA): the GPU executor builds the plan, the tests check it anywhere.
//
// Model: the executor runs steps 0, 1, 2, ... in order on one stream. A buffer is written by
// the step that defines it and read by later steps; its lifetime is the closed interval
// [first, last] of step indices (a step's output is never placed over one of its own inputs,
// since both are live at that step). Values that alias a buffer (reshape, split parts, views)
// are not buffers: the executor records their uses on the buffer they alias, which is how an
// alias keeps its buffer alive. A buffer kept to the end (graph outputs, values the caller
// wants back) lives until the last step.
//
// Placement is the greedy-by-size heuristic of TensorFlow Lite and ONNX Runtime's planners:
// largest buffers first, each at the lowest offset where it overlaps no placed buffer whose
// lifetime intersects its own (best fit among the gaps). Offsets are multiples of the
// alignment (256 bytes, cudaMalloc's own). Invariants, checked by check_arena and the tests:
// two buffers with intersecting lifetimes never share a byte; peak <= sum of sizes; every
// buffer lies inside [0, total).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tensat::gpu {

class ArenaPlanner {
 public:
  struct Buffer {
    size_t bytes = 0;
    int first = 0;  ///< the defining step
    int last = 0;   ///< the last step that reads it (>= first)
  };

  /// A new buffer of `bytes`, written at `step`; returns its index.
  int add(size_t bytes, int step);
  /// Records a read of buffer `b` at `step` (extends its lifetime).
  void use(int b, int step);
  /// Keeps buffer `b` alive until the last step (outputs, values returned to the caller).
  void keep_to_end(int b);

  struct Plan {
    std::vector<Buffer> buffers;  ///< the buffers with their final lifetimes (keep_to_end applied)
    std::vector<size_t> offsets;  ///< per buffer
    size_t total_bytes = 0;       ///< the arena's size
    size_t sum_bytes = 0;         ///< the sizes summed, aligned (what no reuse would need)
  };
  /// Places every buffer; `alignment` must be a power of two.
  Plan plan(size_t alignment = 256) const;

  const std::vector<Buffer>& buffers() const { return buffers_; }
  int last_step() const { return last_step_; }

 private:
  std::vector<Buffer> buffers_;
  std::vector<bool> to_end_;
  int last_step_ = 0;
};

/// Checks a plan's invariants (see the header comment); false with the first violation
/// described in `why`.
bool check_arena(const ArenaPlanner::Plan& plan, size_t alignment, std::string* why);

}  // namespace tensat::gpu
