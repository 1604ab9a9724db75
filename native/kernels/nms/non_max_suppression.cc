// NonMaxSuppression (opsets 10, 11): per (batch, class), boxes above score_threshold are
// taken in descending score order (ties: lower index first) and kept unless their IoU
// with an already kept box exceeds iou_threshold, up to max_output_boxes_per_class.
//
// Each (batch, class) pair is one unit: its candidates are filtered by score and selected
// greedily against the corners and areas precomputed once per box, stopping at
// max_output_boxes_per_class. Candidates are ordered only as far as the selection reaches:
// nth_element splits off the best chunk (twice max_output_boxes_per_class, at least 64),
// only that chunk is sorted, and the next chunk is split off the rest if the selection
// runs past it. A candidate is tested against the kept boxes held as columns (x_min[],
// ..., area[]), a branch-free test over blocks of kept boxes that the compiler vectorises,
// with the early exit between blocks. The greedy selection inside a pair is ordered (each
// decision depends on the earlier ones), but pairs are independent: they run in parallel
// (parallel.block_rows pairs per block), each writing only its own list, and the lists
// are concatenated in (batch, class) order afterwards, so the output does not depend on
// the participant count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace nms {
namespace {

// A box's corners and area, computed once per box with the reference's float operations.
struct Corners {
  float x_min, y_min, x_max, y_max, area;
};

// Corners from [y1, x1, y2, x2] (any diagonal) or [x_center, y_center, width, height].
Corners ToCorners(const float* b, bool center_point) {
  Corners c;
  if (center_point) {
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    c = {b[0] - half_w, b[1] - half_h, b[0] + half_w, b[1] + half_h, 0.0f};
  } else {
    c = {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2]), 0.0f};
  }
  c.area = (c.x_max - c.x_min) * (c.y_max - c.y_min);
  return c;
}

// The kept boxes of a pair as columns, for the candidate test below.
struct KeptColumns {
  std::vector<float> x_min, y_min, x_max, y_max, area;
  void clear() {
    for (auto* v : {&x_min, &y_min, &x_max, &y_max, &area}) v->clear();
  }
  void push_back(const Corners& c) {
    x_min.push_back(c.x_min), y_min.push_back(c.y_min), x_max.push_back(c.x_max), y_max.push_back(c.y_max);
    area.push_back(c.area);
  }
  int64_t size() const { return static_cast<int64_t>(area.size()); }
};

// Kept boxes per block of the candidate test (between blocks: the early exit).
constexpr int64_t kKeptBlock = 16;

// Whether a kept box in [begin, end) overlaps `candidate` by more than iou_threshold: the
// reference's suppress_by_iou (empty intersections and non-positive areas never suppress),
// each of its early returns written as the negation of the same comparison (so NaN
// coordinates decide as there), branch-free.
inline bool AnySuppresses(const KeptColumns& kept, int64_t begin, int64_t end, const Corners& candidate,
                          float iou_threshold) {
  int any = 0;  // int selects, not bools: the form gcc vectorises
  const float* kx0 = kept.x_min.data();
  const float* ky0 = kept.y_min.data();
  const float* kx1 = kept.x_max.data();
  const float* ky1 = kept.y_max.data();
  const float* ka = kept.area.data();
  for (int64_t k = begin; k < end; ++k) {
    const float ix_min = std::max(candidate.x_min, kx0[k]), ix_max = std::min(candidate.x_max, kx1[k]);
    const float iy_min = std::max(candidate.y_min, ky0[k]), iy_max = std::min(candidate.y_max, ky1[k]);
    const float intersection = (ix_max - ix_min) * (iy_max - iy_min);
    const float union_area = candidate.area + ka[k] - intersection;
    const int overlaps = (ix_max <= ix_min ? 0 : 1) & (iy_max <= iy_min ? 0 : 1) & (intersection <= 0 ? 0 : 1);
    const int areas = (candidate.area <= 0 ? 0 : 1) & (ka[k] <= 0 ? 0 : 1) & (union_area <= 0 ? 0 : 1);
    any |= overlaps & areas & (intersection / union_area > iou_threshold ? 1 : 0);
  }
  return any != 0;
}

struct Candidate {
  float score;
  int64_t index;
};

// Descending score, ties by lower index; NaN scores (only possible without a score
// threshold) after every number, by index: a strict total order, so the order is defined.
inline bool Before(const Candidate& a, const Candidate& b) {
  const bool a_nan = std::isnan(a.score), b_nan = std::isnan(b.score);
  if (a_nan || b_nan) return a_nan == b_nan ? a.index < b.index : b_nan;
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}
// The same order when no score is NaN.
inline bool BeforeNumbers(const Candidate& a, const Candidate& b) {
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}

std::vector<ParamSpec> NmsTuningParams() {
  return {
      MinimumElementsParam(4096, "candidate boxes ((batch, class) pairs x boxes) below which the pairs run serially"),
      ParamSpec::Int64(param::kBlockRows, 1, 1, int64_t{1} << 30, "(batch, class) pairs per parallel block")};
}

class NonMaxSuppressionKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    where_ = info.Where();
    OL_ASSIGN_OR_RETURN(int64_t center, info.GetInt("center_point_box", 0));
    if (center != 0 && center != 1) return InvalidArgument(where_, ": center_point_box must be 0 or 1, got ", center);
    center_point_ = center == 1;
    return parallel_.Init(info);
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
    if (const Tensor* t = ctx.input(2); t != nullptr && t->num_elements() > 0) {
      if (t->dtype() != DataType::kInt64) {
        return InvalidArgument(where_, ": max_output_boxes_per_class must be int64, got ", t->TypeAndShape());
      }
      max_per_class = std::max<int64_t>(0, t->data<int64_t>()[0]);
    }
    OL_RETURN_IF_ERROR(ReadFloat(ctx.input(3), "iou_threshold", &iou_threshold).status());
    OL_ASSIGN_OR_RETURN(const bool has_score_threshold, ReadFloat(ctx.input(4), "score_threshold", &score_threshold));

    const int64_t batches = bs[0], num_boxes = bs[1], classes = ss[1], pairs = batches * classes;
    std::vector<std::vector<int64_t>> kept(pairs);  // per (batch, class): kept box indices
    if (max_per_class > 0 && num_boxes > 0) {
      std::vector<Corners> corners(batches * num_boxes);
      const float* box_data = boxes->data<float>();
      for (int64_t i = 0; i < batches * num_boxes; ++i) corners[i] = ToCorners(box_data + i * 4, center_point_);
      const float* score_data = scores->data<float>();
      OL_RETURN_IF_ERROR(parallel_.Run(ctx.parallel(), "nms.pairs", pairs, num_boxes, [&](int64_t begin, int64_t end) {
        std::vector<Candidate> candidates;
        KeptColumns kept_corners;
        for (int64_t p = begin; p < end; ++p) {
          SelectPair(score_data + p * num_boxes, corners.data() + (p / classes) * num_boxes, num_boxes, max_per_class,
                     iou_threshold, has_score_threshold, score_threshold, candidates, kept_corners, kept[p]);
        }
      }));
    }
    int64_t count = 0;
    for (const auto& k : kept) count += static_cast<int64_t>(k.size());
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kInt64, Shape{count, 3}));
    int64_t* o = out->data<int64_t>();
    for (int64_t p = 0; p < pairs; ++p) {
      for (int64_t i : kept[p]) *o++ = p / classes, *o++ = p % classes, *o++ = i;
    }
    return Status::Ok();
  }

 private:
  // One (batch, class) pair: `scores` and `corners` of its num_boxes boxes; the kept
  // indices go to `selected` in selection order. `candidates` and `kept_corners` are the
  // caller's scratch, reused across pairs.
  static void SelectPair(const float* scores, const Corners* corners, int64_t num_boxes, int64_t max_per_class,
                         float iou_threshold, bool has_score_threshold, float score_threshold,
                         std::vector<Candidate>& candidates, KeptColumns& kept_corners,
                         std::vector<int64_t>& selected) {
    candidates.clear();
    bool any_nan = false;
    for (int64_t i = 0; i < num_boxes; ++i) {
      if (!has_score_threshold || scores[i] > score_threshold) {
        candidates.push_back({scores[i], i});
        any_nan |= std::isnan(scores[i]);
      }
    }
    if (any_nan) {
      Select(candidates, Before, corners, max_per_class, iou_threshold, kept_corners, selected);
    } else {
      Select(candidates, BeforeNumbers, corners, max_per_class, iou_threshold, kept_corners, selected);
    }
  }

  // The greedy selection over `candidates` in `before` order, ordered chunk by chunk.
  template <typename Order>
  static void Select(std::vector<Candidate>& candidates, Order before, const Corners* corners, int64_t max_per_class,
                     float iou_threshold, KeptColumns& kept_corners, std::vector<int64_t>& selected) {
    kept_corners.clear();
    const int64_t n = static_cast<int64_t>(candidates.size());
    const int64_t chunk = std::max<int64_t>(64, 2 * std::min(max_per_class, n));
    for (int64_t begin = 0; begin < n;) {
      const int64_t end = std::min(n, begin + chunk);
      auto first = candidates.begin() + begin, last = candidates.begin() + end;
      if (end < n) std::nth_element(first, last - 1, candidates.end(), before);
      std::sort(first, last, before);
      for (int64_t c = begin; c < end; ++c) {
        const Corners& box = corners[candidates[c].index];
        bool suppressed = false;
        for (int64_t k = 0; k < kept_corners.size() && !suppressed; k += kKeptBlock) {
          suppressed =
              AnySuppresses(kept_corners, k, std::min(kept_corners.size(), k + kKeptBlock), box, iou_threshold);
        }
        if (suppressed) continue;
        kept_corners.push_back(box);
        selected.push_back(candidates[c].index);
        if (static_cast<int64_t>(selected.size()) >= max_per_class) return;
      }
      begin = end;
    }
  }

  StatusOr<bool> ReadFloat(const Tensor* t, const char* name, float* value) const {
    if (t == nullptr || t->num_elements() == 0) return false;
    if (t->dtype() != DataType::kFloat)
      return InvalidArgument(where_, ": ", name, " must be float, got ", t->TypeAndShape());
    *value = t->data<float>()[0];
    return true;
  }

  std::string where_;
  bool center_point_ = false;
  ThresholdedParallel parallel_;
};

OL_REGISTER_KERNELS(non_max_suppression) {
  Kernel("NonMaxSuppression")
      .SinceVersions({10, 11})
      .Types(TypeList<float>{})
      .Tuning(NmsTuningParams())
      .Factory(MakeKernel<NonMaxSuppressionKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace nms
}  // namespace onnx_light
