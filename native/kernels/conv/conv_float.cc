#include "native/kernels/conv/conv_float.h"

#include <algorithm>
#include <vector>

#include "native/kernels/conv/depthwise.h"
#include "native/kernels/conv/geometry3d.h"
#include "native/kernels/conv/im2col.h"

namespace onnx_light {
namespace conv {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Status Depthwise(KernelContext& ctx, const ConvGeometry& cg, const float* x, const float* w, const float* bias,
                 float* y, const gemm::GemmTuning& tuning) {
  const Geometry3d g(cg);
  const int64_t planes = cg.batch * cg.out_channels;
  const int64_t per_group = cg.out_per_group();
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / cg.out_channels, m = p % cg.out_channels;
      const float* in = x + (n * cg.in_channels + m / per_group) * g.in_size;
      DepthwisePlane(g, in, w + m * g.kernel_size, bias != nullptr ? bias[m] : 0.0f, y + p * g.out_size);
    }
    return Status::Ok();
  };
  const int64_t plane_macs = std::max<int64_t>(1, g.out_size * g.kernel_size);
  if (gemm::GemmWorkUnits(planes, plane_macs, 1) < tuning.parallel_minimum_tasks) return run(0, planes);
  const int64_t grain = std::max<int64_t>(1, gemm::kMacsPerWorkUnit / plane_macs);
  return ParallelFor(ctx.parallel(), planes, ParallelPlan{"conv.depthwise_planes", grain}, run);
}

// GEMM tasks: (image, group, tile of output positions). Tiles are whole packed panels of
// about one B block; when there are fewer tasks than participants' multiples the tiles
// shrink so that the count divides evenly (a result never depends on the tiling).
struct Tiling {
  int64_t tiles_per_plane = 1, tile = 0;
  int64_t tasks(const ConvGeometry& g) const { return g.batch * g.group * tiles_per_plane; }
};

Tiling ChooseTiling(const ConvGeometry& g, int participants) {
  const gemm::GemmBlocking blocking = gemm::PreferredBlocking();
  const int64_t planes = g.batch * g.group;
  const int64_t max_tiles = std::max<int64_t>(1, CeilDiv(g.out_size, blocking.nr));
  int64_t tiles = std::min(max_tiles, std::max<int64_t>(1, CeilDiv(g.out_size, blocking.nc)));
  for (int64_t t = tiles; t <= std::min(max_tiles, tiles + participants); ++t) {
    if ((planes * t) % participants == 0) {
      tiles = t;
      break;
    }
  }
  Tiling tiling;
  tiling.tile = std::min(g.out_size, CeilDiv(CeilDiv(g.out_size, tiles), blocking.nr) * blocking.nr);
  tiling.tiles_per_plane = CeilDiv(g.out_size, tiling.tile);
  return tiling;
}

bool IsPointwise(const ConvGeometry& g) {
  for (int i = 0; i < g.rank; ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads_begin[i] != 0 || g.pads_end[i] != 0) return false;
  }
  return true;
}

Status GemmConv(KernelContext& ctx, const ConvGeometry& cg, const float* x, const float* w, const float* bias,
                float* y, const gemm::GemmTuning& tuning) {
  const Geometry3d g(cg);
  const int64_t mg = cg.out_per_group(), cgi = cg.in_per_group(), k = cgi * g.kernel_size;
  const bool pointwise = IsPointwise(cg);
  const ParallelPlan plan{"conv.gemm_tiles", 1};
  const bool parallel =
      gemm::GemmWorkUnits(cg.batch * cg.out_channels, g.out_size, k) >= tuning.parallel_minimum_tasks;
  const int available = parallel ? AvailableParticipants(ctx.parallel(), plan) : 1;
  const Tiling tiling = ChooseTiling(cg, available);
  const int64_t tasks = tiling.tasks(cg);
  const int participants = static_cast<int>(std::min<int64_t>(available, tasks));
  // The weights are packed once, shared read-only by every task; each participant packs
  // only its im2col (B) blocks.
  const size_t slice = gemm::SgemmSerialScratchBytes(mg, tiling.tile, k);
  const size_t packed_group = gemm::PrepackedASize(mg, k);
  const size_t packed_bytes = (sizeof(float) * packed_group * cg.group + 63) / 64 * 64;
  ScratchArena arena(ctx.allocator(), packed_bytes + slice * participants);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(float* packed_w, arena.AllocateArray<float>(packed_group * cg.group));
  std::vector<float*> scratch(participants);
  for (auto& s : scratch) {
    OL_ASSIGN_OR_RETURN(s, arena.AllocateArray<float>(slice / sizeof(float)));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  for (int64_t grp = 0; grp < cg.group; ++grp) {
    gemm::PrepackA(false, mg, k, w + grp * mg * k, k, packed_w + grp * packed_group);
  }
  const auto run = [&](int participant, int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t plane = t / tiling.tiles_per_plane, col0 = (t % tiling.tiles_per_plane) * tiling.tile;
      const int64_t n = plane / cg.group, grp = plane % cg.group;
      const int64_t cols = std::min(tiling.tile, g.out_size - col0);
      const float* xg = x + (n * cg.in_channels + grp * cgi) * g.in_size;
      const float* wg = packed_w + grp * packed_group;
      float* yg = y + (n * cg.out_channels + grp * mg) * g.out_size + col0;
      if (pointwise) {
        const gemm::DenseBSource source(false, xg + col0, g.in_size);
        gemm::SgemmSerialPrepackedA(wg, mg, cols, k, 1.0f, source, 0.0f, yg, g.out_size, scratch[participant]);
      } else {
        const Im2colSource source(g, xg, col0);
        gemm::SgemmSerialPrepackedA(wg, mg, cols, k, 1.0f, source, 0.0f, yg, g.out_size, scratch[participant]);
      }
      if (bias != nullptr) {
        for (int64_t m = 0; m < mg; ++m) {
          const float b = bias[grp * mg + m];
          float* row = yg + m * g.out_size;
          for (int64_t j = 0; j < cols; ++j) row[j] += b;
        }
      }
    }
    return Status::Ok();
  };
  if (participants == 1) return run(0, 0, tasks);
  return ParallelForWithParticipant(ctx.parallel(), tasks, ParallelPlan{plan.label, 1, participants}, run);
}

}  // namespace

Status ConvForward(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   float* y, const gemm::GemmTuning& tuning) {
  if (g.batch == 0 || g.out_channels == 0 || g.out_size == 0) return Status::Ok();
  if (g.in_per_group() == 0 || g.kernel_size == 0) {
    // Empty reduction: the output is the bias alone.
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t m = 0; m < g.out_channels; ++m) {
        float* plane = y + (n * g.out_channels + m) * g.out_size;
        std::fill(plane, plane + g.out_size, bias != nullptr ? bias[m] : 0.0f);
      }
    }
    return Status::Ok();
  }
  if (g.in_per_group() == 1) return Depthwise(ctx, g, x, w, bias, y, tuning);
  return GemmConv(ctx, g, x, w, bias, y, tuning);
}

}  // namespace conv
}  // namespace onnx_light
