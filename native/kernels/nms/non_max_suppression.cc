// NonMaxSuppression (opsets 10, 11): per (batch, class), boxes above score_threshold are
// taken in descending score order (ties: lower index first) and kept unless their IoU
// with an already kept box exceeds iou_threshold, up to max_output_boxes_per_class.
// Greedy and ordered (each decision depends on the earlier ones): family nms is serial.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "native/registry/kernel.h"

namespace onnx_light {
namespace nms {
namespace {

struct Box {
  float x_min, x_max, y_min, y_max;
};

// Corners from [y1, x1, y2, x2] (any diagonal) or [x_center, y_center, width, height].
Box ToBox(const float* b, bool center_point) {
  if (center_point) {
    return {b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2};
  }
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

bool Overlaps(const Box& a, const Box& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (ix_max <= ix_min || iy_max <= iy_min) return false;
  const float intersection = (ix_max - ix_min) * (iy_max - iy_min);
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

class NonMaxSuppressionKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t center, info.GetInt("center_point_box", 0));
    if (center != 0 && center != 1) return InvalidArgument(where_, ": center_point_box must be 0 or 1, got ", center);
    center_point_ = center == 1;
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* boxes, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* scores, ctx.RequiredInput(1));
    const Shape& bs = boxes->shape();
    const Shape& ss = scores->shape();
    if (boxes->dtype() != DataType::kFloat || scores->dtype() != DataType::kFloat || bs.rank() != 3 || bs[2] != 4 ||
        ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
      return InvalidArgument(where_, ": expected float boxes [B, N, 4] and scores [B, C, N], got ",
                             boxes->TypeAndShape(), " and ", scores->TypeAndShape());
    }
    int64_t max_per_class = 0;
    float iou_threshold = 0.0f, score_threshold = 0.0f;
    bool has_score_threshold = false;
    if (const Tensor* t = ctx.input(2); t != nullptr && t->num_elements() > 0) {
      if (t->dtype() != DataType::kInt64) return InvalidArgument(where_, ": max_output_boxes_per_class must be int64");
      max_per_class = std::max<int64_t>(0, t->data<int64_t>()[0]);
    }
    OL_RETURN_IF_ERROR(ReadFloat(ctx.input(3), "iou_threshold", &iou_threshold).status());
    OL_ASSIGN_OR_RETURN(has_score_threshold, ReadFloat(ctx.input(4), "score_threshold", &score_threshold));

    const int64_t batches = bs[0], num_boxes = bs[1], classes = ss[1];
    std::vector<int64_t> selected;  // (batch, class, box) triples
    std::vector<int64_t> order;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < batches; ++b) {
      const float* box_data = boxes->data<float>() + b * num_boxes * 4;
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = scores->data<float>() + (b * classes + c) * num_boxes;
        order.clear();
        for (int64_t i = 0; i < num_boxes; ++i) {
          if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
          const Box candidate = ToBox(box_data + i * 4, center_point_);
          const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
            return Overlaps(candidate, ToBox(box_data + k * 4, center_point_), iou_threshold);
          });
          if (suppressed) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    const int64_t count = static_cast<int64_t>(selected.size() / 3);
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kInt64, Shape{count, 3}));
    std::copy(selected.begin(), selected.end(), out->data<int64_t>());
    return Status::Ok();
  }

 private:
  StatusOr<bool> ReadFloat(const Tensor* t, const char* name, float* value) const {
    if (t == nullptr || t->num_elements() == 0) return false;
    if (t->dtype() != DataType::kFloat)
      return InvalidArgument(where_, ": ", name, " must be float, got ", t->TypeAndShape());
    *value = t->data<float>()[0];
    return true;
  }

  std::string where_;
  bool center_point_ = false;
};

OL_REGISTER_KERNELS(non_max_suppression) {
  for (int since : {10, 11}) {
    KernelDef def;
    def.op = "NonMaxSuppression";
    def.since_version = since;
    def.end_version = since == 10 ? 10 : kOpenEnded;
    def.family = OL_KERNEL_FAMILY;
    def.element_types = {DataType::kFloat};
    def.factory = MakeKernel<NonMaxSuppressionKernel>();
    registry.Add(std::move(def));
  }
}

}  // namespace
}  // namespace nms
}  // namespace onnx_light
