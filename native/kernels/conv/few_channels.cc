#include "native/kernels/conv/few_channels.h"

#include <algorithm>

namespace onnx_light {
namespace conv {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// The portable lanes: one float. Its multiply-add is two operations, which the compiler
// contracts into one fused multiply-add only where the baseline has it (AArch64).
struct ScalarLanes {
  using V = float;
  static constexpr int kLanes = 1;
  static V Set(float v) { return v; }
  static V Load(const float* p) { return *p; }
  static void Store(float* p, V v) { *p = v; }
  static V Fmadd(V a, V b, V c) { return a * b + c; }
};

#include "native/kernels/conv/few_channels_simd.inc"

void FewChannelsRowPortable(int64_t taps, const int64_t* offsets, const float* src, const float* w, int channels,
                            float* const* y, int64_t width) {
  FewChannelsRow<ScalarLanes, 4, 4>(taps, offsets, src, w, channels, y, width);
}

void FewChannelsStagePortable(const float* in, int64_t in_w, int64_t pad, int64_t stride, int64_t length, float* out) {
  FewChannelsStageRow(in, in_w, pad, stride, length, out);
}

const FewChannelsKernel& BestKernel() {
  static const FewChannelsKernel kernel = BestVariant(FewChannelsVariants()).impl;
  return kernel;
}

// Where a strip's staged input lives: per input channel of the group, `rows` padded input
// rows, each as `phases` (stride_w) phase rows of `length` floats. Element i of phase p of
// staged row r is padded pixel (top + r, i * phases + p), padded coordinates starting at
// (-pad_top, -pad_left) of the input; zero outside the input.
struct Staging {
  int64_t rows = 0, phases = 1, length = 0;
  int64_t row_floats() const { return phases * length; }
  int64_t channel_floats() const { return rows * row_floats(); }
};

Staging StagingFor(const ConvGeometry& g, const FewChannelsKernel& kernel) {
  Staging s;
  const int64_t out_h = g.out_spatial[0], out_w = g.out_spatial[1];
  const int64_t strip = std::min(kFewChannelsStripRows, out_h);
  s.rows = (strip - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
  s.phases = g.strides[1];
  // The widest tap reads phase elements [q, q + RoundUp(out_w, lanes)), q = (kernel_w - 1) * dilation_w / stride_w.
  s.length = RoundUp(RoundUp(out_w, kernel.lanes) + (g.kernel[1] - 1) * g.dilations[1] / g.strides[1], 16);
  return s;
}

// Stages the input rows of output rows [oh0, oh0 + strip) of one image's group (`x`: its
// first input channel plane).
void StageStrip(FewChannelsStageFn stage_row, const ConvGeometry& g, const Staging& s, const float* x, int64_t oh0,
                float* stage) {
  const int64_t in_h = g.in_spatial[0], in_w = g.in_spatial[1], top = oh0 * g.strides[0] - g.pads_begin[0];
  for (int64_t c = 0; c < g.in_per_group(); ++c) {
    const float* plane = x + c * g.in_size;
    for (int64_t r = 0; r < s.rows; ++r) {
      const int64_t ih = top + r;
      const float* row = ih >= 0 && ih < in_h ? plane + ih * in_w : nullptr;
      float* target = stage + c * s.channel_floats() + r * s.row_floats();
      stage_row(row, in_w, g.pads_begin[1], s.phases, s.length, target);
    }
  }
}

}  // namespace

const std::vector<IsaVariant<FewChannelsKernel>>& FewChannelsVariants() {
  static const auto* variants = new std::vector<IsaVariant<FewChannelsKernel>> {
#if defined(__x86_64__)
    {"avx512", Isa::kAvx512, FewChannelsKernel{8, 16, FewChannelsRowAvx512, FewChannelsStageAvx512}},
        {"avx2", Isa::kAvx2, FewChannelsKernel{4, 8, FewChannelsRowAvx2, FewChannelsStageAvx2}},
#elif defined(__aarch64__)
    {"neon", Isa::kNeon, FewChannelsKernel{8, 4, FewChannelsRowNeon, FewChannelsStageNeon}},
#endif
        {"portable", Isa::kPortable, FewChannelsKernel{4, 1, FewChannelsRowPortable, FewChannelsStagePortable}},
  };
  return *variants;
}

bool FewChannelsApplies(int rank, int64_t out_per_group, int64_t in_per_group, int64_t kernel_size) {
  return rank == 2 && in_per_group >= 1 && in_per_group <= kFewChannelsMaxInputs &&
         out_per_group >= kFewChannelsMinOutputs && kernel_size >= 2 && kernel_size <= kFewChannelsMaxKernelArea;
}

Status FewChannelsConv(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w, const float* bias,
                       float* y, const gemm::GemmTuning& tuning, const gemm::Epilogue& epilogue) {
  const FewChannelsKernel& kernel = BestKernel();
  if (kernel.channels > kFewChannelsMaxBlock) {
    return Internal("conv: a few-channel row kernel of ", kernel.channels, " output channels");
  }
  const int64_t mg = g.out_per_group(), cg = g.in_per_group(), taps = cg * g.kernel_size;
  const int64_t out_h = g.out_spatial[0], out_w = g.out_spatial[1];
  const int64_t block = kernel.channels, blocks = CeilDiv(mg, block);
  const int64_t strips = CeilDiv(out_h, kFewChannelsStripRows);
  const int64_t tasks = g.batch * g.group * strips * blocks;
  const Staging staging = StagingFor(g, kernel);
  const int64_t stage_floats = RoundUp(cg * staging.channel_floats(), 16);  // whole cache lines
  const int64_t packed_floats = g.group * blocks * taps * block;

  const ParallelPlan plan{"conv.few_channels_strips", 1};
  const bool parallel = gemm::GemmWorkUnits(g.out_channels, g.out_size, taps) >= tuning.parallel_minimum_tasks;
  const int participants =
      static_cast<int>(std::min<int64_t>(parallel ? AvailableParticipants(ctx.parallel(), plan) : 1, tasks));
  ScratchArena arena(ctx.allocator(),
                     sizeof(float) * (packed_floats + stage_floats * participants) + sizeof(int64_t) * taps + 3 * 64);
  OL_RETURN_IF_ERROR(arena.status());
  // Tap offsets into a staged strip, (input channel, kh, kw) order, W's.
  OL_ASSIGN_OR_RETURN(int64_t * offsets, arena.AllocateArray<int64_t>(taps));
  for (int64_t c = 0, t = 0; c < cg; ++c) {
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw, ++t) {
        const int64_t column = kw * g.dilations[1];
        offsets[t] = c * staging.channel_floats() + kh * g.dilations[0] * staging.row_floats() +
                     column % staging.phases * staging.length + column / staging.phases;
      }
    }
  }
  // W as (group, block, tap, channel of the block), zero past the group's channels.
  OL_ASSIGN_OR_RETURN(float* packed, arena.AllocateArray<float>(packed_floats));
  for (int64_t grp = 0; grp < g.group; ++grp) {
    for (int64_t b = 0; b < blocks; ++b) {
      float* target = packed + (grp * blocks + b) * taps * block;
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t j = 0; j < block; ++j) {
          const int64_t m = b * block + j;
          target[t * block + j] = m < mg ? w[(grp * mg + m) * taps + t] : 0.0f;
        }
      }
    }
  }
  OL_ASSIGN_OR_RETURN(float* stages, arena.AllocateArray<float>(stage_floats * participants));
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));

  const gemm::Epilogue* finish = epilogue.empty() ? nullptr : &epilogue;
  const int64_t row_step = g.strides[0] * staging.row_floats();
  const auto run = [&](int participant, int64_t begin, int64_t end) {
    float* stage = stages + participant * stage_floats;
    int64_t staged = -1;  // the (image, group, strip) whose rows `stage` holds
    float* rows[kFewChannelsMaxBlock];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t strip_key = t / blocks, b = t % blocks;
      const int64_t strip = strip_key % strips, image_group = strip_key / strips;
      const int64_t n = image_group / g.group, grp = image_group % g.group;
      const int64_t oh0 = strip * kFewChannelsStripRows, oh1 = std::min(out_h, oh0 + kFewChannelsStripRows);
      if (strip_key != staged) {
        StageStrip(kernel.stage, g, staging, x + (n * g.in_channels + grp * cg) * g.in_size, oh0, stage);
        staged = strip_key;
      }
      const int64_t m0 = grp * mg + b * block;
      const int channels = static_cast<int>(std::min<int64_t>(block, mg - b * block));
      float* first = y + (n * g.out_channels + m0) * g.out_size + oh0 * out_w;
      const float* block_w = packed + (grp * blocks + b) * taps * block;
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        for (int j = 0; j < channels; ++j) rows[j] = first + j * g.out_size + (oh - oh0) * out_w;
        kernel.row(taps, offsets, stage + (oh - oh0) * row_step, block_w, channels, rows, out_w);
      }
      // Bias and the epilogue on the block's strip while it is in cache.
      gemm::FinishRows(finish, bias != nullptr ? bias + m0 : nullptr, first, first - y, channels, (oh1 - oh0) * out_w,
                       g.out_size);
    }
    return Status::Ok();
  };
  if (participants == 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(ctx.parallel(), tasks, ParallelPlan{plan.label, 1, participants}, run);
}

}  // namespace conv
}  // namespace onnx_light
