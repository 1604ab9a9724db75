#include "native/kernels/conv/conv_float.h"

#include <algorithm>
#include <vector>

#include "native/kernels/conv/depthwise.h"
#include "native/kernels/conv/few_channels.h"
#include "native/kernels/conv/geometry3d.h"
#include "native/kernels/conv/im2col.h"
#include "native/kernels/conv/implicit_gemm.h"

namespace onnx_light {
namespace conv {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// The epilogue as the activation a depthwise plane applies itself (depthwise.h), or
// false when the plane cannot take it (a residual or a bias in it, or an activation the
// planes do not have): then the epilogue runs on each plane after the plane.
bool PlaneActivationOf(const gemm::Epilogue& e, PlaneActivation* act) {
  if (e.residual != nullptr || e.bias != nullptr) return false;
  act->alpha = e.alpha;
  act->beta = e.beta;
  switch (e.activation) {
    case gemm::Activation::kNone:
      act->kind = PlaneActivationKind::kNone;
      return true;
    case gemm::Activation::kRelu:
      act->kind = PlaneActivationKind::kRelu;
      return true;
    case gemm::Activation::kClip:
      act->kind = PlaneActivationKind::kClip;
      return true;
    case gemm::Activation::kSigmoid:
      act->kind = PlaneActivationKind::kSigmoid;
      return true;
    case gemm::Activation::kHardSwish:
      act->kind = PlaneActivationKind::kHardSwish;
      return true;
    case gemm::Activation::kSwish:
      act->kind = PlaneActivationKind::kSwish;
      return true;
    default:
      return false;
  }
}

// Depthwise by blocks of `blocks.lanes` output channels of one image (the channel-blocked
// kernels, depthwise.h), parallel over the blocks with a scratch slice per participant;
// the activation runs inside the block kernel, or (a residual, or an activation it does not
// have) the epilogue on each of a block's planes once the block is written.
Status DepthwiseChannelBlocks(KernelContext& ctx, const ConvGeometry& cg, const Geometry3d& g,
                              const DepthwiseChannels& blocks, const float* x, const float* w, const float* bias,
                              float* y, bool parallel, const gemm::Epilogue& epilogue) {
  constexpr int kMaxLanes = 16;
  const int lanes = blocks.lanes;
  if (lanes > kMaxLanes) return Internal("conv: a channel-blocked depthwise variant of ", lanes, " lanes");
  const int64_t per_group = cg.out_per_group(), per_image = CeilDiv(cg.out_channels, lanes);
  const int64_t tasks = cg.batch * per_image;
  const ParallelPlan plan{"conv.depthwise_channel_blocks", 1};
  const int participants =
      static_cast<int>(std::min<int64_t>(parallel ? AvailableParticipants(ctx.parallel(), plan) : 1, tasks));
  const int64_t slice = RoundUp(DepthwiseChannelsScratch(g, lanes), 16);  // whole cache lines
  ScratchArena arena(ctx.allocator(), sizeof(float) * slice * participants);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(float* scratch, arena.AllocateArray<float>(slice * participants));
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  // The activation inside the block kernel where it takes it, else the epilogue per plane.
  PlaneActivation act;
  const bool in_block = PlaneActivationOf(epilogue, &act);
  if (!in_block) act = PlaneActivation{};
  const auto run = [&](int participant, int64_t begin, int64_t end) {
    const float* planes[kMaxLanes];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / per_image, m0 = t % per_image * lanes;
      const int channels = static_cast<int>(std::min<int64_t>(lanes, cg.out_channels - m0));
      for (int c = 0; c < channels; ++c) {
        planes[c] = x + (n * cg.in_channels + (m0 + c) / per_group) * g.in_size;
      }
      const int64_t first = n * cg.out_channels + m0;
      blocks.fn(g, planes, w + m0 * g.kernel_size, bias != nullptr ? bias + m0 : nullptr, channels, act,
                y + first * g.out_size, scratch + participant * slice);
      if (in_block) continue;
      for (int64_t p = first; p < first + channels; ++p) {
        epilogue.Apply(y + p * g.out_size, p * g.out_size, 1, g.out_size, g.out_size);
      }
    }
    return Status::Ok();
  };
  if (participants == 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(ctx.parallel(), tasks, ParallelPlan{plan.label, 1, participants}, run);
}

Status Depthwise(KernelContext& ctx, const ConvGeometry& cg, const float* x, const float* w, const float* bias,
                 float* y, const ConvTuning& tuning, const gemm::Epilogue& epilogue) {
  const Geometry3d g(cg);
  const int64_t planes = cg.batch * cg.out_channels;
  const int64_t per_group = cg.out_per_group();
  const double multiply_adds =
      static_cast<double>(planes) * static_cast<double>(g.out_size) * static_cast<double>(g.kernel_size);
  const bool parallel = multiply_adds >= static_cast<double>(tuning.depthwise_minimum_multiply_adds);
  const DepthwiseChannels blocks = SelectDepthwiseChannels(g, cg.out_channels);
  if (blocks.fn != nullptr) return DepthwiseChannelBlocks(ctx, cg, g, blocks, x, w, bias, y, parallel, epilogue);
  const DepthwisePlaneFn plane = SelectDepthwisePlane(g);
  // The activation inside the plane kernel where it takes it (on each strip of rows while
  // it is in L1), else the epilogue over each plane once it is written.
  PlaneActivation act;
  const bool in_plane = PlaneActivationOf(epilogue, &act);
  if (!in_plane) act = PlaneActivation{};
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / cg.out_channels, m = p % cg.out_channels;
      const float* in = x + (n * cg.in_channels + m / per_group) * g.in_size;
      plane(g, in, w + m * g.kernel_size, bias != nullptr ? bias[m] : 0.0f, act, y + p * g.out_size);
      if (!in_plane) epilogue.Apply(y + p * g.out_size, p * g.out_size, 1, g.out_size, g.out_size);
    }
    return Status::Ok();
  };
  if (!parallel) return run(0, planes);
  return ParallelFor(ctx.parallel(), planes, ParallelPlan{"conv.depthwise_planes", 1}, run);
}

// GEMM tasks: (image, group, block of output channels, tile of output positions). Column
// tiles are runs of whole NR panels (panels spread evenly over the tiles), channel blocks
// runs of whole MR rows. A task generates its im2col columns once and runs all its
// channels against them, so splitting channels repeats the im2col of those columns; the
// split is chosen by a cost model only when few tasks exist (small outputs such as 7x7 or
// 14x14, where column tiles alone cannot balance the participants). A result never
// depends on the tiling (each element's reduction has one fixed order).
struct Tiling {
  int64_t planes = 1, rows = 0, cols = 0;  // per plane: output channels, output positions
  int64_t row_panels = 1, col_panels = 1;  // MR rows / NR columns each
  int mr = 1, nr = 1;
  int64_t row_blocks = 1, col_tiles = 1;

  int64_t tasks() const { return planes * row_blocks * col_tiles; }
  int64_t RowBegin(int64_t b) const { return std::min(rows, row_panels * b / row_blocks * mr); }
  int64_t ColBegin(int64_t t) const { return std::min(cols, col_panels * t / col_tiles * nr); }
  int64_t MaxTileCols() const { return CeilDiv(col_panels, col_tiles) * nr; }
};

// Partition cost of one im2col (or B packing) element, in multiply-adds.
constexpr int64_t kPackCostInMacs = 8;
// With at least this many tasks per participant, plain column tiles balance well enough.
constexpr int64_t kEnoughTasksPerParticipant = 4;

// The slowest participant's estimated cost under ParallelFor's static partition.
int64_t SlowestParticipant(const Tiling& t, int64_t k, int participants) {
  const Partition partition = ComputePartition(t.tasks(), 1, participants);
  int64_t worst = 0;
  for (int p = 0; p < partition.participants; ++p) {
    int64_t cost = 0;
    const int64_t end = std::min(t.tasks(), partition.LastBlock(p) * partition.block_size);
    for (int64_t task = partition.FirstBlock(p) * partition.block_size; task < end; ++task) {
      const int64_t b = task / t.col_tiles % t.row_blocks, c = task % t.col_tiles;
      // Rows and columns as they are: the GEMM's partial tiles at a task's edges compute
      // only the vectors they fill (gemm/microkernel.h), so a task of 17 columns costs about
      // half a task of 32 (rounding both up to whole 32-column panels split N = 49 as 32 + 17
      // on two participants, one idle for a third of the time).
      const int64_t rows = t.RowBegin(b + 1) - t.RowBegin(b);
      const int64_t cols = t.ColBegin(c + 1) - t.ColBegin(c);
      cost += (rows + kPackCostInMacs) * cols * k;
    }
    worst = std::max(worst, cost);
  }
  return worst;
}

Tiling ChooseTiling(const ConvGeometry& g, int64_t k, int participants) {
  const gemm::GemmBlocking blocking = gemm::PreferredBlocking();
  Tiling t;
  t.planes = g.batch * g.group;
  t.rows = g.out_per_group();
  t.cols = g.out_size;
  t.mr = blocking.mr;
  t.nr = blocking.nr;
  t.row_panels = CeilDiv(t.rows, t.mr);
  t.col_panels = CeilDiv(t.cols, t.nr);
  const int64_t natural_tiles = std::min(t.col_panels, CeilDiv(t.cols, blocking.nc));
  t.col_tiles = natural_tiles;
  if (participants == 1 || t.tasks() >= kEnoughTasksPerParticipant * participants) return t;
  Tiling best = t;
  int64_t best_cost = SlowestParticipant(t, k, participants);
  for (int64_t blocks = 1; blocks <= std::min<int64_t>(t.row_panels, 2 * participants); ++blocks) {
    for (int64_t tiles = natural_tiles; tiles <= std::min(t.col_panels, natural_tiles + 2 * participants); ++tiles) {
      Tiling candidate = t;
      candidate.row_blocks = blocks;
      candidate.col_tiles = tiles;
      const int64_t cost = SlowestParticipant(candidate, k, participants);
      if (cost < best_cost) {
        best = candidate;
        best_cost = cost;
      }
    }
  }
  return best;
}

bool IsPointwise(const ConvGeometry& g) {
  for (int i = 0; i < g.rank; ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads_begin[i] != 0 || g.pads_end[i] != 0) return false;
  }
  return true;
}

Status GemmConv(KernelContext& ctx, const ConvGeometry& cg, const float* x, const float* w, const float* packed_w,
                const float* bias, float* y, const gemm::GemmTuning& tuning, const gemm::Epilogue& epilogue) {
  const Geometry3d g(cg);
  const int64_t mg = cg.out_per_group(), cgi = cg.in_per_group(), k = cgi * g.kernel_size;
  const bool pointwise = IsPointwise(cg);
  const ParallelPlan plan{"conv.gemm_tiles", 1};
  const bool parallel = gemm::GemmWorkUnits(cg.batch * cg.out_channels, g.out_size, k) >= tuning.parallel_minimum_tasks;
  const int available = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
  const Tiling tiling = ChooseTiling(cg, k, available);
  const int64_t tasks = tiling.tasks();
  const int participants = static_cast<int>(std::min<int64_t>(available, tasks));
  // The weights (packed once, here unless the kernel prepacked them) are shared read-only
  // by every task; each participant packs only its im2col (B) blocks.
  const size_t slice = gemm::SgemmSerialScratchBytes(mg, tiling.MaxTileCols(), k);
  const size_t packed_group = gemm::PrepackedASize(mg, k);
  const size_t packed_bytes = packed_w != nullptr ? 0 : (sizeof(float) * packed_group * cg.group + 63) / 64 * 64;
  ScratchArena arena(ctx.allocator(), packed_bytes + slice * participants);
  OL_RETURN_IF_ERROR(arena.status());
  if (packed_w == nullptr) {
    OL_ASSIGN_OR_RETURN(float* packed, arena.AllocateArray<float>(packed_group * cg.group));
    for (int64_t grp = 0; grp < cg.group; ++grp) {
      gemm::PrepackA(false, mg, k, w + grp * mg * k, k, packed + grp * packed_group);
    }
    packed_w = packed;
  }
  std::vector<float*> scratch(participants);
  for (auto& s : scratch) {
    OL_ASSIGN_OR_RETURN(s, arena.AllocateArray<float>(slice / sizeof(float)));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  const gemm::Epilogue* fused_epilogue = epilogue.empty() ? nullptr : &epilogue;
  const auto run = [&](int participant, int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t plane = t / (tiling.row_blocks * tiling.col_tiles);
      const int64_t block = t / tiling.col_tiles % tiling.row_blocks, tile = t % tiling.col_tiles;
      const int64_t n = plane / cg.group, grp = plane % cg.group;
      const int64_t m0 = tiling.RowBegin(block), m1 = tiling.RowBegin(block + 1);
      const int64_t col0 = tiling.ColBegin(tile), cols = tiling.ColBegin(tile + 1) - col0;
      const float* xg = x + (n * cg.in_channels + grp * cgi) * g.in_size;
      const float* wg = packed_w + grp * packed_group;
      float* yg = y + (n * cg.out_channels + grp * mg) * g.out_size + col0;
      // Bias, then the epilogue, fused into the GEMM's block writes (each mr x nc block
      // once its reduction is complete, while it is in L1).
      const float* row_bias = bias != nullptr ? bias + grp * mg : nullptr;
      if (pointwise) {
        const gemm::DenseBSource source(false, xg + col0, g.in_size);
        gemm::SgemmSerialPrepackedARows(wg, mg, m0, m1, cols, k, 1.0f, source, 0.0f, yg, g.out_size,
                                        scratch[participant], row_bias, fused_epilogue, yg - y);
      } else {
        const Im2colSource source(g, xg, col0);
        gemm::SgemmSerialPrepackedARows(wg, mg, m0, m1, cols, k, 1.0f, source, 0.0f, yg, g.out_size,
                                        scratch[participant], row_bias, fused_epilogue, yg - y);
      }
    }
    return Status::Ok();
  };
  if (participants == 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(ctx.parallel(), tasks, ParallelPlan{plan.label, 1, participants}, run);
}

}  // namespace

std::vector<ParamSpec> ConvTuningParams() {
  std::vector<ParamSpec> params = gemm::GemmTuningParams();
  for (ParamSpec& spec : params) {
    if (spec.name == param::kMinimumTasks) spec.portable_default = ParamValue(kConvMinimumTasks);
  }
  params.push_back(ParamSpec::Int64(param::kDepthwiseMinimumMultiplyAdds, kConvDepthwiseMinimumMultiplyAdds, 1,
                                    int64_t{1} << 50,
                                    "multiply-adds below which a depthwise-style convolution (one input channel "
                                    "per group) runs serially"));
  params.push_back(
      ParamSpec::Int64(kImplicitChunkPanelBytesParam, kConvImplicitChunkPanelBytes, 1, int64_t{1} << 50,
                       "bytes of weight panel (K x tile columns x 4) above which the implicit-GEMM convolution "
                       "runs K in equal chunks of at most this many"));
  params.push_back(ParamSpec::Int64(kImplicitChunkTilesParam, kConvImplicitChunkTiles, 1, 256,
                                    "position tiles per task of the implicit-GEMM convolution when its K is "
                                    "blocked (each K chunk's weight panel is reused by this many tiles)"));
  return params;
}

StatusOr<ConvTuning> ReadConvTuning(const ResolvedTuning& tuning) {
  ConvTuning t;
  OL_ASSIGN_OR_RETURN(t.gemm, gemm::ReadGemmTuning(tuning));
  OL_ASSIGN_OR_RETURN(t.depthwise_minimum_multiply_adds, tuning.Int64(param::kDepthwiseMinimumMultiplyAdds));
  OL_ASSIGN_OR_RETURN(t.implicit_chunk_panel_bytes, tuning.Int64(kImplicitChunkPanelBytesParam));
  OL_ASSIGN_OR_RETURN(t.implicit_chunk_tiles, tuning.Int64(kImplicitChunkTilesParam));
  return t;
}

StatusOr<PackedConvWeights> PackedConvWeights::Pack(const Tensor& w, int64_t group,
                                                    const std::function<void(int64_t)>& rows_read) {
  PackedConvWeights packed;
  const Shape& shape = w.shape();
  if (w.dtype() != DataType::kFloat || shape.rank() < 3 || group <= 0 || w.num_elements() == 0) return packed;
  const int64_t m = shape[0];
  if (m % group != 0 || shape[1] <= 1) return packed;  // invalid, or depthwise (no GEMM)
  const int64_t mg = m / group, k = w.num_elements() / m;
  if (FewChannelsApplies(shape.rank() - 2, mg, shape[1], k / shape[1])) return packed;  // packs per run
  // The layout of the path ConvForward will take for these weights.
  const bool implicit = ImplicitGemmApplies(shape.rank() - 2, mg, shape[1], k / shape[1]);
  const int64_t per_group = implicit ? ImplicitPackedSize(mg, k) : static_cast<int64_t>(gemm::PrepackedASize(mg, k));
  OL_ASSIGN_OR_RETURN(packed.packed_,
                      Tensor::Allocate(DataType::kFloat, Shape({per_group * group}), Allocator::Default()));
  for (int64_t grp = 0; grp < group; ++grp) {
    const float* source = w.data<float>() + grp * mg * k;
    float* target = packed.packed_.data<float>() + grp * per_group;
    std::function<void(int64_t)> group_rows_read;  // the group's rows as rows of w
    if (rows_read) group_rows_read = [&rows_read, grp, mg](int64_t rows) { rows_read(grp * mg + rows); };
    if (implicit) {
      PackImplicitWeights(mg, k, source, target, group_rows_read);
    } else {
      gemm::PrepackA(false, mg, k, source, k, target, group_rows_read);
    }
  }
  packed.source_shape_ = shape;
  return packed;
}

const float* PackedConvWeights::Find(const Tensor& w) const {
  if (!packed() || w.dtype() != DataType::kFloat || w.shape() != source_shape_) return nullptr;
  return packed_.data<float>();
}

Status ConvForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w, const float* packed_w,
                   const float* bias, float* y, const ConvTuning& tuning, const gemm::Epilogue& epilogue) {
  if (g.batch == 0 || g.out_channels == 0 || g.out_size == 0) return Status::Ok();
  if (g.in_per_group() == 0 || g.kernel_size == 0) {
    // Empty reduction: the output is the bias alone.
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t m = 0; m < g.out_channels; ++m) {
        float* plane = y + (n * g.out_channels + m) * g.out_size;
        std::fill(plane, plane + g.out_size, bias != nullptr ? bias[m] : 0.0f);
        epilogue.Apply(plane, plane - y, 1, g.out_size, g.out_size);
      }
    }
    return Status::Ok();
  }
  if (FewChannelsApplies(g.rank, g.out_per_group(), g.in_per_group(), g.kernel_size)) {
    return FewChannelsConv(ctx, g, x, w, bias, y, tuning.gemm, epilogue);
  }
  if (g.in_per_group() == 1) return Depthwise(ctx, g, x, w, bias, y, tuning, epilogue);
  if (ImplicitGemmApplies(g.rank, g.out_per_group(), g.in_per_group(), g.kernel_size)) {
    return ImplicitGemmConv(ctx, g, x, w, packed_w, bias, y, tuning.gemm, epilogue, tuning.implicit_chunk_panel_bytes,
                            tuning.implicit_chunk_tiles);
  }
  return GemmConv(ctx, g, x, w, packed_w, bias, y, tuning.gemm, epilogue);
}

}  // namespace conv
}  // namespace onnx_light
