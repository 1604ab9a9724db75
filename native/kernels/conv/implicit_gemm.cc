#include "native/kernels/conv/implicit_gemm.h"

#include "native/kernels/conv/implicit_gemm_avx2.h"
#include "native/kernels/conv/implicit_gemm_avx512.h"

#include <algorithm>

namespace onnx_light {
namespace conv {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Output positions per epilogue call (a multiple of every tile's 3, 6, 8 and 12 rows).
constexpr int64_t kEpiloguePositions = 48;

// Where the tile reads the input: X itself when the convolution reads no padding, else a
// zero-padded copy (rows x cols per channel) whose origin is input pixel (-pad_h, -pad_w).
struct Source {
  int64_t rows = 0, cols = 0;  // per channel plane
  bool padded = false;
};

Source ChooseSource(const ConvGeometry& g) {
  Source s;
  // Extent the taps reach, relative to the first (possibly padded) pixel.
  const int64_t reach_h = (g.out_spatial[0] - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
  const int64_t reach_w = (g.out_spatial[1] - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1;
  s.padded = g.pads_begin[0] > 0 || g.pads_begin[1] > 0 || reach_h - g.pads_begin[0] > g.in_spatial[0] ||
             reach_w - g.pads_begin[1] > g.in_spatial[1];
  s.rows = s.padded ? reach_h : g.in_spatial[0];
  s.cols = s.padded ? reach_w : g.in_spatial[1];
  return s;
}

// Copies channel planes [begin, end) of one image x into the padded layout.
void PadPlanes(const ConvGeometry& g, const Source& s, const float* x, int64_t begin, int64_t end, float* padded) {
  const int64_t in_h = g.in_spatial[0], in_w = g.in_spatial[1], top = g.pads_begin[0], left = g.pads_begin[1];
  for (int64_t plane = begin; plane < end; ++plane) {
    const float* in = x + plane * in_h * in_w;
    float* out = padded + plane * s.rows * s.cols;
    std::fill(out, out + s.rows * s.cols, 0.0f);
    for (int64_t r = 0; r < s.rows; ++r) {
      const int64_t ih = r - top;
      if (ih < 0 || ih >= in_h) continue;
      // Columns c with 0 <= c - left < in_w.
      const int64_t c0 = std::max<int64_t>(0, left), c1 = std::min(s.cols, in_w + left);
      if (c1 > c0) std::copy(in + ih * in_w + (c0 - left), in + ih * in_w + (c1 - left), out + r * s.cols + c0);
    }
  }
}

}  // namespace

const std::vector<IsaVariant<ImplicitTile>>& ImplicitTileVariants() {
  static const auto* variants = new std::vector<IsaVariant<ImplicitTile>> {
#if defined(__x86_64__)
    {"avx512_6x64", Isa::kAvx512, ImplicitTile{6, 64, ImplicitTile6x64Avx512, ImplicitTile6x64BlockedAvx512}},
        {"avx512_12x32", Isa::kAvx512, ImplicitTile{12, 32, ImplicitTile12x32Avx512, ImplicitTile12x32BlockedAvx512}},
        {"avx512_8x48", Isa::kAvx512, ImplicitTile{8, 48, ImplicitTile8x48Avx512, ImplicitTile8x48BlockedAvx512}},
        {"avx512_12x16", Isa::kAvx512, ImplicitTile{12, 16, ImplicitTile12x16Avx512, ImplicitTile12x16BlockedAvx512}},
        {"avx2_3x32", Isa::kAvx2, ImplicitTile{3, 32, ImplicitTile3x32Avx2, ImplicitTile3x32BlockedAvx2}},
        {"avx2_6x16", Isa::kAvx2, ImplicitTile{6, 16, ImplicitTile6x16Avx2, ImplicitTile6x16BlockedAvx2}},
#endif
  };
  return *variants;
}

ImplicitTile ImplicitTileFor(int64_t out_per_group) {
  ImplicitTile best;
  if (out_per_group <= 0) return best;
  for (const IsaVariant<ImplicitTile>& variant : ImplicitTileVariants()) {
    if (!IsaEnabled(variant.isa)) continue;
    // Fewest padded columns; ties to the earlier (better) tile.
    if (best.fn == nullptr || RoundUp(out_per_group, variant.impl.cols) < RoundUp(out_per_group, best.cols)) {
      best = variant.impl;
    }
  }
  return best;
}

bool ImplicitGemmApplies(int rank, int64_t out_per_group, int64_t in_per_group, int64_t kernel_size) {
  if (rank != 2 || out_per_group <= 0 || in_per_group <= 1 || kernel_size <= 1) return false;
  const ImplicitTile tile = ImplicitTileFor(out_per_group);
  // Padded columns cost FMAs like real ones: take the tile while less than half of its
  // columns are padding (im2col + GEMM pays the im2col copy of K floats per position and
  // pads the channels to its own MR rows).
  return tile.fn != nullptr && RoundUp(out_per_group, tile.cols) < 2 * out_per_group;
}

int64_t ImplicitPackedSize(int64_t mg, int64_t k) {
  const ImplicitTile tile = ImplicitTileFor(mg);
  return tile.fn == nullptr ? 0 : RoundUp(mg, tile.cols) * k;
}

void PackImplicitWeights(int64_t mg, int64_t k, const float* w, float* packed,
                         const std::function<void(int64_t)>& rows_read) {
  const int cols = ImplicitTileFor(mg).cols;
  for (int64_t block = 0; block < CeilDiv(mg, cols); ++block) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int j = 0; j < cols; ++j) {
        const int64_t m = block * cols + j;
        packed[(block * k + kk) * cols + j] = m < mg ? w[m * k + kk] : 0.0f;
      }
    }
    if (rows_read) rows_read(std::min<int64_t>((block + 1) * cols, mg));
  }
}

Status ImplicitGemmConv(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                        const float* packed_w, const float* bias, float* y, const gemm::GemmTuning& tuning,
                        const gemm::Epilogue& epilogue, int64_t chunk_panel_bytes, int64_t chunk_tiles) {
  const int64_t mg = g.out_per_group(), cg = g.in_per_group(), k = cg * g.kernel_size;
  const ImplicitTile shape = ImplicitTileFor(mg);
  // The last block of a group may be partial: its packed columns past mg are zero and the
  // tile stores only the group's channels.
  const int64_t out_w = g.out_spatial[1], blocks = CeilDiv(mg, shape.cols), packed_group = RoundUp(mg, shape.cols) * k;
  const int64_t tiles = CeilDiv(g.out_size, shape.rows);
  // K blocking (see implicit_gemm.h): chunks of equal length (the last may be shorter), a
  // task is up to chunk_tiles tiles of one channel block. Unblocked: a task per tile.
  const int64_t k_chunk =
      chunk_panel_bytes > 0 ? std::max<int64_t>(1, chunk_panel_bytes / (int64_t{sizeof(float)} * shape.cols)) : 0;
  const int64_t chunks = k_chunk > 0 && k > k_chunk ? CeilDiv(k, k_chunk) : 1, chunk_k = CeilDiv(k, chunks);
  const int64_t task_tiles = chunks > 1 ? std::min(tiles, std::max<int64_t>(1, chunk_tiles)) : 1;
  const int64_t tile_groups = CeilDiv(tiles, task_tiles);
  const int64_t tasks = g.group * blocks * tile_groups;  // per image
  const Source source = ChooseSource(g);
  const int64_t source_plane = source.rows * source.cols, image_floats = g.in_channels * source_plane;
  const bool parallel = gemm::GemmWorkUnits(g.out_channels, g.out_size, k) >= tuning.parallel_minimum_tasks;
  const ParallelPlan tiles_plan{"conv.implicit_tiles", 1};
  // Per participant, with K blocking: the raw sums of a task's tiles between chunks.
  const int participants = parallel ? AvailableParticipants(ctx.parallel(), tiles_plan) : 1;
  const int64_t carry_floats = chunks > 1 ? task_tiles * shape.rows * shape.cols : 0;

  // Scratch: the tap offsets, W packed for this run unless prepacked, one image's padded
  // copy (images are padded and computed one after the other) and the carries.
  ScratchArena arena(ctx.allocator(), sizeof(float) * ((source.padded ? image_floats : 0) +
                                                       (packed_w == nullptr ? g.group * packed_group : 0) +
                                                       participants * carry_floats) +
                                          sizeof(int64_t) * k + (carry_floats > 0 ? 4 : 3) * 64);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(int64_t * offsets, arena.AllocateArray<int64_t>(k));
  for (int64_t c = 0, kk = 0; c < cg; ++c) {
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw, ++kk) {
        offsets[kk] = c * source_plane + kh * g.dilations[0] * source.cols + kw * g.dilations[1];
      }
    }
  }
  if (packed_w == nullptr) {
    OL_ASSIGN_OR_RETURN(float* packed, arena.AllocateArray<float>(g.group * packed_group));
    for (int64_t grp = 0; grp < g.group; ++grp) {
      PackImplicitWeights(mg, k, w + grp * mg * k, packed + grp * packed_group);
    }
    packed_w = packed;
  }
  float* padded = nullptr;
  if (source.padded) {
    OL_ASSIGN_OR_RETURN(padded, arena.AllocateArray<float>(image_floats));
  }
  float* carries = nullptr;
  if (carry_floats > 0) {
    OL_ASSIGN_OR_RETURN(carries, arena.AllocateArray<float>(participants * carry_floats));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));

  const int64_t row_step = g.strides[0] * source.cols;
  for (int64_t n = 0; n < g.batch; ++n) {
    const float* src = x + n * g.in_channels * g.in_size;
    if (source.padded) {
      const auto pad = [&](int64_t begin, int64_t end) {
        PadPlanes(g, source, src, begin, end, padded);
        return Status::Ok();
      };
      OL_RETURN_IF_ERROR(parallel
                             ? ParallelFor(ctx.parallel(), g.in_channels, ParallelPlan{"conv.implicit_pad", 1}, pad)
                             : pad(0, g.in_channels));
      ctx.RecordCopy();
      src = padded;
    }
    float* y_image = y + n * g.out_channels * g.out_size;
    const auto run = [&](int participant, int64_t begin, int64_t end) {
      const float* rows[kMaxImplicitRows];
      float* const carry = carries != nullptr ? carries + participant * carry_floats : nullptr;
      // The epilogue runs on runs of consecutive tiles of one channel block as soon as they
      // hold kEpiloguePositions positions (cols x 48 floats, L1-resident): rows long enough
      // for whole vectors. It is elementwise, so the grouping changes no value.
      float* pending = nullptr;
      int64_t pending_positions = 0, pending_channels = 0;
      const auto flush = [&] {
        if (pending_positions > 0)
          epilogue.Apply(pending, pending - y, pending_channels, pending_positions, g.out_size);
        pending_positions = 0;
      };
      // A partial block's bias (zero past the group's channels: the tile reads cols).
      alignas(64) float staged_bias[kMaxImplicitCols];
      for (int64_t t = begin; t < end; ++t) {
        const int64_t grp = t / (blocks * tile_groups), block = t / tile_groups % blocks,
                      first_tile = t % tile_groups * task_tiles, last_tile = std::min(tiles, first_tile + task_tiles);
        const float* image = src + grp * cg * source_plane;
        const int64_t m0 = grp * mg + block * shape.cols,
                      channels = std::min<int64_t>(shape.cols, mg - block * shape.cols);
        const float* block_w = packed_w + grp * packed_group + block * shape.cols * k;
        const float* tile_bias = bias != nullptr ? bias + m0 : nullptr;
        if (channels != shape.cols && bias != nullptr) {
          std::fill(staged_bias, staged_bias + shape.cols, 0.0f);
          std::copy(bias + m0, bias + m0 + channels, staged_bias);
          tile_bias = staged_bias;
        }
        for (int64_t chunk = 0; chunk < chunks; ++chunk) {
          const int64_t k0 = chunk * chunk_k, k_count = std::min(chunk_k, k - k0);
          const bool last = chunk + 1 == chunks;
          for (int64_t tile = first_tile; tile < last_tile; ++tile) {
            const int64_t p0 = tile * shape.rows, valid = std::min<int64_t>(shape.rows, g.out_size - p0);
            // Rows past the output's end repeat position p0 (read, then discarded).
            int64_t oh = p0 / out_w, ow = p0 % out_w;
            for (int i = 0; i < shape.rows; ++i) {
              rows[i] = i < valid ? image + oh * row_step + ow * g.strides[1] : rows[0];
              if (++ow == out_w) {
                ow = 0;
                ++oh;
              }
            }
            float* tile_carry = carry != nullptr ? carry + (tile - first_tile) * shape.rows * shape.cols : nullptr;
            const float* carry_in = chunk > 0 ? tile_carry : nullptr;
            float* carry_out = last ? nullptr : tile_carry;
            float* tile_y = y_image + m0 * g.out_size + p0;
            shape.fn(k_count, offsets + k0, rows, block_w + k0 * shape.cols, tile_bias, static_cast<int>(valid),
                     static_cast<int>(channels), tile_y, g.out_size, carry_in, carry_out);
            if (!last) continue;
            if (epilogue.empty()) continue;
            if (pending_positions > 0 && (tile_y != pending + pending_positions || pending_channels != channels ||
                                          pending_positions >= kEpiloguePositions)) {
              flush();
            }
            if (pending_positions == 0) {
              pending = tile_y;
              pending_channels = channels;
            }
            pending_positions += valid;
          }
        }
      }
      flush();
      return Status::Ok();
    };
    OL_RETURN_IF_ERROR(parallel ? ParallelForWithParticipant(ctx.parallel(), tasks, tiles_plan, run)
                                : run(0, 0, tasks));
  }
  return Status::Ok();
}

}  // namespace conv
}  // namespace onnx_light
