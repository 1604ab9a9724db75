#include <algorithm>
#include <vector>

#include "native/kernels/conv/conv_float.h"

namespace onnx_light {
namespace conv {
namespace {

// Column buffer of one task, in floats: output channels are blocked so that
// channels * kernel_size * input positions stays near this (at least one channel).
constexpr int64_t kColumnBudget = int64_t{1} << 20;

// Scatters the columns of `channels` output channels into their planes (already holding
// the bias): for each channel, kernel offset and input position in order.
void Col2im(const ConvGeometry& g, const float* col, int64_t channels, float* y) {
  const int r = g.rank;
  std::vector<int64_t> koff(r), pos(r);
  for (int64_t m = 0; m < channels; ++m) {
    float* plane = y + m * g.out_size;
    for (int64_t kr = 0; kr < g.kernel_size; ++kr) {
      for (int64_t rem = kr, i = r - 1; i >= 0; --i) {
        koff[i] = rem % g.kernel[i];
        rem /= g.kernel[i];
      }
      const float* src = col + (m * g.kernel_size + kr) * g.in_size;
      std::fill(pos.begin(), pos.end(), 0);
      for (int64_t p = 0; p < g.in_size; ++p) {
        int64_t offset = 0;
        bool inside = true;
        for (int i = 0; i < r; ++i) {
          const int64_t o = pos[i] * g.strides[i] - g.pads_begin[i] + koff[i] * g.dilations[i];
          inside = inside && o >= 0 && o < g.out_spatial[i];
          offset = offset * g.out_spatial[i] + o;
        }
        if (inside) plane[offset] += src[p];
        for (int i = r - 1; i >= 0; --i) {
          if (++pos[i] < g.in_spatial[i]) break;
          pos[i] = 0;
        }
      }
    }
  }
}

}  // namespace

Status ConvTransposeForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                            const float* bias, float* y, const gemm::GemmTuning& tuning) {
  if (g.batch == 0 || g.out_channels == 0 || g.out_size == 0) return Status::Ok();
  const int64_t cg = g.in_per_group(), mg = g.out_per_group(), ks = g.kernel_size;
  const int64_t block = std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(1, ks * g.in_size), 1, mg);
  const int64_t blocks_per_group = (mg + block - 1) / block;
  const int64_t tasks = g.batch * g.group * blocks_per_group;
  const ParallelPlan plan{"conv_transpose.channel_blocks", 1};
  const bool parallel =
      gemm::GemmWorkUnits(g.batch * g.out_channels * ks, g.in_size, cg) >= tuning.parallel_minimum_tasks;
  const int participants =
      static_cast<int>(std::min<int64_t>(parallel ? AvailableParticipants(ctx.parallel(), plan) : 1, tasks));
  const int64_t col_floats = block * ks * g.in_size;
  const size_t slice =
      (sizeof(float) * col_floats + 63) / 64 * 64 + gemm::SgemmSerialScratchBytes(block * ks, g.in_size, cg);
  ScratchArena arena(ctx.allocator(), slice * participants);
  OL_RETURN_IF_ERROR(arena.status());
  std::vector<float*> scratch(participants);
  for (auto& s : scratch) {
    OL_ASSIGN_OR_RETURN(s, arena.AllocateArray<float>(slice / sizeof(float)));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  const auto run = [&](int participant, int64_t begin, int64_t end) {
    float* col = scratch[participant];
    float* gemm_scratch = col + (sizeof(float) * col_floats + 63) / 64 * 64 / sizeof(float);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t plane = t / blocks_per_group, m0 = (t % blocks_per_group) * block;
      const int64_t n = plane / g.group, grp = plane % g.group;
      const int64_t channels = std::min(block, mg - m0);
      // col (channels * ks x in_size) = W_g^T rows [m0 * ks, ...) times X_g (cg x in_size).
      // W_g is stored cg x (mg * ks), so its transpose is read with trans_a.
      const float* wg = w + grp * cg * mg * ks + m0 * ks;
      const float* xg = x + (n * g.in_channels + grp * cg) * g.in_size;
      gemm::SgemmSerial(true, false, channels * ks, g.in_size, cg, 1.0f, wg, mg * ks, xg, g.in_size, 0.0f, col,
                        g.in_size, gemm_scratch);
      float* yg = y + (n * g.out_channels + grp * mg + m0) * g.out_size;
      for (int64_t m = 0; m < channels; ++m) {
        std::fill(yg + m * g.out_size, yg + (m + 1) * g.out_size, bias != nullptr ? bias[grp * mg + m0 + m] : 0.0f);
      }
      Col2im(g, col, channels, yg);
    }
    return Status::Ok();
  };
  if (participants == 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(ctx.parallel(), tasks, ParallelPlan{plan.label, 1, participants}, run);
}

}  // namespace conv
}  // namespace onnx_light
