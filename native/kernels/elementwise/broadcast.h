// Multidirectional (numpy) broadcasting of up to kMaxBroadcastInputs inputs, planned once
// per Compute and walked per output block.
//
// The plan drops size-1 output axes and merges adjacent axes along which every input is
// either contiguous or broadcast alike, so that same-shape inputs become one flat run and
// "[N,C,H,W] + [C,1,1]" becomes three axes. Along the innermost merged axis each input's
// stride is 0 (broadcast) or 1 (contiguous): kernels see runs (pointer, stride 0|1, n),
// which is what their vectorised loops want.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "native/core/shape.h"
#include "native/core/status.h"

namespace onnx_light {
namespace elementwise {

inline constexpr int kMaxBroadcastInputs = 3;
// Axes left after merging; more needs more alternating broadcast patterns than any model has.
inline constexpr int kMaxBroadcastRank = 16;

struct BroadcastPlan {
  Shape output_shape;
  int64_t output_size = 0;
  int num_inputs = 0;
  int rank = 0;                                   // merged axes, >= 1
  std::array<int64_t, kMaxBroadcastRank> dims{};  // merged axis sizes, outermost first
  // strides[i][axis]: elements of input i to advance per step along axis (0 = broadcast).
  std::array<std::array<int64_t, kMaxBroadcastRank>, kMaxBroadcastInputs> strides{};
};

// The broadcast of `shapes`. InvalidArgument naming `where` and every shape when they are
// not broadcastable. With `output`, the result must be that shape (inputs broadcast to it).
inline StatusOr<BroadcastPlan> PlanBroadcast(const std::vector<Shape>& shapes, const std::string& where,
                                             const Shape* output = nullptr) {
  auto describe = [&] {
    std::string s;
    for (const Shape& shape : shapes) s += (s.empty() ? "" : " and ") + shape.ToString();
    return s;
  };
  BroadcastPlan plan;
  plan.num_inputs = static_cast<int>(shapes.size());
  if (plan.num_inputs < 1 || plan.num_inputs > kMaxBroadcastInputs) {
    return Internal(where, ": broadcast of ", plan.num_inputs, " inputs");
  }
  int out_rank = output ? output->rank() : 0;
  for (const Shape& s : shapes) out_rank = std::max(out_rank, s.rank());
  std::vector<int64_t> out_dims(out_rank, 1);
  // Input dims aligned to the right; missing leading dims are 1.
  auto aligned = [&](int i, int axis) {
    const Shape& s = shapes[i];
    const int k = axis - (out_rank - s.rank());
    return k < 0 ? int64_t{1} : s.dim(k);
  };
  for (int axis = 0; axis < out_rank; ++axis) {
    int64_t d = 1;
    for (int i = 0; i < plan.num_inputs; ++i) {
      const int64_t a = aligned(i, axis);
      if (a == 1 || a == d) continue;
      if (d != 1) return InvalidArgument(where, ": shapes ", describe(), " are not broadcastable");
      d = a;
    }
    if (output) {
      const int k = axis - (out_rank - output->rank());
      const int64_t want = k < 0 ? 1 : output->dim(k);
      if (d != want && d != 1) {
        return InvalidArgument(where, ": shapes ", describe(), " do not broadcast to ", output->ToString());
      }
      d = want;
    }
    out_dims[axis] = d;
  }
  OL_ASSIGN_OR_RETURN(plan.output_shape, Shape::Create(output ? output->dims() : out_dims));
  plan.output_size = plan.output_shape.num_elements();
  // Contiguous strides of each input, then merge: keep axes of size > 1, fuse an axis into
  // the previous kept one when every input continues contiguously (or stays broadcast).
  std::vector<std::vector<int64_t>> in_strides(plan.num_inputs, std::vector<int64_t>(out_rank, 0));
  for (int i = 0; i < plan.num_inputs; ++i) {
    int64_t stride = 1;
    for (int axis = out_rank - 1; axis >= 0; --axis) {
      const int64_t a = aligned(i, axis);
      in_strides[i][axis] = a == 1 ? 0 : stride;
      stride *= a;
    }
  }
  int rank = 0;
  for (int axis = 0; axis < out_rank; ++axis) {
    const int64_t d = out_dims[axis];
    if (d == 1) continue;
    bool merge = rank > 0;
    for (int i = 0; merge && i < plan.num_inputs; ++i) {
      merge = plan.strides[i][rank - 1] == in_strides[i][axis] * d;
    }
    if (merge) {
      plan.dims[rank - 1] *= d;
      for (int i = 0; i < plan.num_inputs; ++i) plan.strides[i][rank - 1] = in_strides[i][axis];
      continue;
    }
    if (rank == kMaxBroadcastRank) {
      return NotImplemented(where, ": shapes ", describe(), " need more than ", kMaxBroadcastRank, " broadcast axes");
    }
    plan.dims[rank] = d;
    for (int i = 0; i < plan.num_inputs; ++i) plan.strides[i][rank] = in_strides[i][axis];
    ++rank;
  }
  if (rank == 0) {  // every axis is 1: one element
    plan.dims[0] = 1;
    rank = 1;
  }
  plan.rank = rank;
  return plan;
}

// The plan PlanBroadcast gives inputs that all have `shape`: one flat contiguous run. For
// the common same-shape case, without the planner's shape copies and temporaries.
inline BroadcastPlan SameShapePlan(const Shape& shape, int num_inputs) {
  BroadcastPlan plan;
  plan.output_shape = shape;
  plan.output_size = shape.num_elements();
  plan.num_inputs = num_inputs;
  plan.rank = 1;
  plan.dims[0] = plan.output_size;
  for (int i = 0; i < num_inputs; ++i) plan.strides[i][0] = 1;
  return plan;
}

// Pre-opset-7 "broadcast=1" semantics: B's shape is a contiguous run of A's dims starting
// at `axis` (suffix when axis is absent) or B is a scalar; returns B's shape padded with
// 1s to A's rank. With broadcast=0 the shapes must be equal.
inline StatusOr<Shape> LegacyBroadcastShape(const Shape& a, const Shape& b, bool broadcast, const int64_t* axis,
                                            const std::string& where) {
  if (!broadcast) {
    if (a != b) {
      return InvalidArgument(where, ": shapes ", a.ToString(), " and ", b.ToString(),
                             " differ and attribute broadcast is 0");
    }
    return b;
  }
  if (b.num_elements() == 1 && b.rank() <= 1) return Shape(std::vector<int64_t>(a.rank(), 1));
  const int64_t start = axis ? *axis : a.rank() - b.rank();
  if (start < 0 || start + b.rank() > a.rank()) {
    return InvalidArgument(where, ": shape ", b.ToString(), " does not fit in ", a.ToString(), " at axis ", start);
  }
  std::vector<int64_t> dims(a.rank(), 1);
  for (int k = 0; k < b.rank(); ++k) {
    if (b.dim(k) != a.dim(start + k)) {
      return InvalidArgument(where, ": shape ", b.ToString(), " does not match ", a.ToString(), " at axis ", start);
    }
    dims[start + k] = b.dim(k);
  }
  return Shape(std::move(dims));
}

// Calls run(out_offset, in_offsets, in_inner_strides, n) for each contiguous run of the
// output range [begin, end): n outputs from out_offset on, input i starting at element
// in_offsets[i] and advancing by in_inner_strides[i] (0 or 1) per output.
template <typename RunFn>
void ForEachRun(const BroadcastPlan& plan, int64_t begin, int64_t end, RunFn&& run) {
  const int r = plan.rank;
  const int inner_axis = r - 1;
  const int64_t inner = plan.dims[inner_axis];
  std::array<int64_t, kMaxBroadcastRank> index{};
  std::array<int64_t, kMaxBroadcastInputs> offset{};
  std::array<int64_t, kMaxBroadcastInputs> inner_stride{};
  int64_t rest = begin;
  for (int axis = r - 1; axis >= 0; --axis) {
    index[axis] = rest % plan.dims[axis];
    rest /= plan.dims[axis];
    for (int i = 0; i < plan.num_inputs; ++i) offset[i] += index[axis] * plan.strides[i][axis];
  }
  for (int i = 0; i < plan.num_inputs; ++i) inner_stride[i] = plan.strides[i][inner_axis];
  int64_t position = begin;
  while (position < end) {
    const int64_t n = std::min(inner - index[inner_axis], end - position);
    run(position, offset.data(), inner_stride.data(), n);
    position += n;
    if (position >= end) break;
    // Carry into the outer axes.
    for (int i = 0; i < plan.num_inputs; ++i) offset[i] -= index[inner_axis] * inner_stride[i];
    index[inner_axis] = 0;
    for (int axis = inner_axis - 1; axis >= 0; --axis) {
      for (int i = 0; i < plan.num_inputs; ++i) offset[i] += plan.strides[i][axis];
      if (++index[axis] < plan.dims[axis]) break;
      for (int i = 0; i < plan.num_inputs; ++i) offset[i] -= plan.dims[axis] * plan.strides[i][axis];
      index[axis] = 0;
    }
  }
}

}  // namespace elementwise
}  // namespace onnx_light
