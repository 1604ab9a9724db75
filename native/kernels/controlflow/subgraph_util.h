// What If, Loop and Scan share: reaching the session's subgraph runner, reading scalar
// conditions and counts, and stopping promptly when the run is cancelled.
#pragma once

#include <string>
#include <vector>

#include "native/graph/graph.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace controlflow {

// The session's runner; Internal when the kernel runs outside a session.
StatusOr<SubgraphRunner*> Runner(KernelContext& ctx);

// Runs `body` and checks that it returned `expected_outputs` values.
StatusOr<std::vector<Value>> RunBody(KernelContext& ctx, const Graph& body, const std::vector<Value>& inputs,
                                     size_t expected_outputs);

// The single element of a bool / integer tensor (what `cond` and `M` must be).
StatusOr<bool> ScalarBool(const KernelContext& ctx, const Value& value, const char* what);
StatusOr<int64_t> ScalarInt64(const KernelContext& ctx, const Value& value, const char* what);

template <typename T>
StatusOr<Tensor> MakeScalar(T value, Allocator* allocator) {
  OL_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(kDataTypeOf<T>, Shape(), allocator));
  *t.data<T>() = value;
  return t;
}

// Cancelled when the run was terminated or timed out (checked once per iteration, so a
// loop whose body has no node still stops).
Status CheckCancelled(const KernelContext& ctx, int64_t iteration);

// An empty scan output (zero iterations): the body's declared element type for output
// `output`, shaped [0, per-iteration dims...] when those are all known, else [0].
StatusOr<Tensor> EmptyScanOutput(const KernelContext& ctx, const Graph& body, size_t output);

}  // namespace controlflow
}  // namespace onnx_light
