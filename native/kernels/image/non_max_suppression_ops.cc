// NonMaxSuppression: per (batch, class), candidates above score_threshold are visited by
// descending score (ties: lower box index first); a candidate is kept unless its IoU with
// an already kept box of that class exceeds iou_threshold, until max_output_boxes_per_class
// are kept. Each decision depends on every earlier one, so the op is serial (its own family).
#include <algorithm>
#include <numeric>

#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

struct Corners {
  float ymin, xmin, ymax, xmax;
  float Area() const { return (ymax - ymin) * (xmax - xmin); }
};

Corners ToCorners(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  }
  // [y1, x1, y2, x2], any pair of diagonal corners
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

bool Overlaps(const Corners& a, const Corners& b, float iou_threshold) {
  const float w = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin);
  const float h = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
  if (w <= 0 || h <= 0) return false;
  const float intersection = w * h;
  const float union_area = a.Area() + b.Area() - intersection;
  if (a.Area() <= 0 || b.Area() <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

// An optional scalar input (absent or empty: the default).
template <typename T>
StatusOr<T> OptionalScalar(const KernelContext& ctx, int index, T default_value) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr || t->shape().num_elements() == 0) return default_value;
  if (t->dtype() != kDataTypeOf<T>) {
    return InvalidArgument(ctx.Where(), ": input ", index, " must be ", DataTypeName(kDataTypeOf<T>), ", got ",
                           DataTypeName(t->dtype()));
  }
  return t->data<T>()[0];
}

class NonMaxSuppressionKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(int64_t center, info.GetInt("center_point_box", 0));
    if (center != 0 && center != 1) return InvalidArgument(info.Where(), ": center_point_box must be 0 or 1");
    center_point_ = center == 1;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* boxes, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* scores, ctx.RequiredInput(1));
    const Shape& bs = boxes->shape();
    const Shape& ss = scores->shape();
    if (boxes->dtype() != DataType::kFloat || scores->dtype() != DataType::kFloat) {
      return InvalidArgument(ctx.Where(), ": boxes and scores must be float");
    }
    if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
      return InvalidArgument(ctx.Where(), ": boxes ", bs.ToString(), " must be [B, S, 4] and scores ", ss.ToString(),
                             " [B, C, S]");
    }
    OL_ASSIGN_OR_RETURN(int64_t max_per_class, OptionalScalar<int64_t>(ctx, 2, 0));
    OL_ASSIGN_OR_RETURN(float iou_threshold, OptionalScalar<float>(ctx, 3, 0.f));
    const Tensor* score_threshold_input = ctx.input(4);
    const bool filter = score_threshold_input != nullptr && score_threshold_input->shape().num_elements() > 0;
    OL_ASSIGN_OR_RETURN(float score_threshold, OptionalScalar<float>(ctx, 4, 0.f));
    const int64_t batches = bs[0], spatial = bs[1], classes = ss[1];
    max_per_class = std::clamp<int64_t>(max_per_class, 0, spatial);

    std::vector<int64_t> selected;  // flat (batch, class, box) triples, in output order
    std::vector<int64_t> order;
    std::vector<Corners> kept;
    for (int64_t b = 0; b < batches; ++b) {
      const float* batch_boxes = boxes->data<float>() + b * spatial * 4;
      for (int64_t c = 0; c < classes && max_per_class > 0; ++c) {
        const float* s = scores->data<float>() + (b * classes + c) * spatial;
        order.clear();
        for (int64_t i = 0; i < spatial; ++i) {
          if (!filter || s[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return s[l] > s[r]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) == max_per_class) break;
          const Corners box = ToCorners(batch_boxes + i * 4, center_point_);
          if (std::any_of(kept.begin(), kept.end(), [&](const Corners& k) { return Overlaps(box, k, iou_threshold); })) {
            continue;
          }
          kept.push_back(box);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    const int64_t count = static_cast<int64_t>(selected.size()) / 3;
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kInt64, Shape{count, 3}));
    std::copy(selected.begin(), selected.end(), out->data<int64_t>());
    return Status::Ok();
  }

 private:
  bool center_point_ = false;
};

}  // namespace

OL_REGISTER_KERNELS(non_max_suppression_family) {
  const int spans[][2] = {{10, 10}, {11, kOpenEnded}};
  for (const auto& span : spans) {
    KernelDef def;
    def.op = "NonMaxSuppression";
    def.since_version = span[0];
    def.end_version = span[1];
    def.family = "non_max_suppression";
    def.element_types = {DataType::kFloat};
    def.factory = MakeKernel<NonMaxSuppressionKernel>();
    registry.Add(std::move(def));
  }
}

}  // namespace onnx_light
