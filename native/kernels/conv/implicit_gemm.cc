#include "native/kernels/conv/implicit_gemm.h"

#include "native/kernels/conv/implicit_gemm_avx2.h"
#include "native/kernels/conv/implicit_gemm_avx512.h"

#include <algorithm>

namespace onnx_light {
namespace conv {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Output positions of a run of tiles at most (a multiple of every tile's 3, 6 and 12 rows):
// the run's running sums (48 x 64 floats at most, 12 KiB) and one K chunk of weights (16
// KiB) share L1.
constexpr int64_t kRunPositions = 48;

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
    {"avx512_6x64", Isa::kAvx512, ImplicitTile{6, 64, ImplicitTile6x64Avx512}},
        {"avx512_12x32", Isa::kAvx512, ImplicitTile{12, 32, ImplicitTile12x32Avx512}},
        {"avx2_3x32", Isa::kAvx2, ImplicitTile{3, 32, ImplicitTile3x32Avx2}},
        {"avx2_6x16", Isa::kAvx2, ImplicitTile{6, 16, ImplicitTile6x16Avx2}},
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

void PackImplicitWeights(int64_t mg, int64_t k, const float* w, float* packed) {
  const int cols = ImplicitTileFor(mg).cols;
  for (int64_t block = 0; block < CeilDiv(mg, cols); ++block) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int j = 0; j < cols; ++j) {
        const int64_t m = block * cols + j;
        packed[(block * k + kk) * cols + j] = m < mg ? w[m * k + kk] : 0.0f;
      }
    }
  }
}

Status ImplicitGemmConv(KernelContext& ctx, const ConvGeometry& g, const float* x, const float* w,
                        const float* packed_w, const float* bias, float* y, const gemm::GemmTuning& tuning,
                        const gemm::Epilogue& epilogue) {
  const int64_t mg = g.out_per_group(), cg = g.in_per_group(), k = cg * g.kernel_size;
  const ImplicitTile shape = ImplicitTileFor(mg);
  // The last block of a group may be partial: its packed columns past mg are zero, the
  // tile writes into a staging block and only the group's channels are copied out.
  const int64_t out_w = g.out_spatial[1], blocks = CeilDiv(mg, shape.cols), packed_group = RoundUp(mg, shape.cols) * k;
  const int64_t tiles = CeilDiv(g.out_size, shape.rows);
  // Runs of consecutive tiles, the tiles spread evenly over them (tiles * r / runs on).
  const int64_t runs = CeilDiv(tiles, kRunPositions / shape.rows);
  const int64_t tasks = g.group * blocks * runs;  // per image
  // K in equal chunks of at most ImplicitKChunk taps (147 = 74 + 73, not 128 + 19).
  const int64_t k_chunk = CeilDiv(k, CeilDiv(k, ImplicitKChunk(shape.cols)));
  const Source source = ChooseSource(g);
  const int64_t source_plane = source.rows * source.cols, image_floats = g.in_channels * source_plane;

  // Scratch: the tap offsets, W packed for this run unless prepacked, and one image's
  // padded copy (images are padded and computed one after the other).
  ScratchArena arena(ctx.allocator(), sizeof(float) * ((source.padded ? image_floats : 0) +
                                                       (packed_w == nullptr ? g.group * packed_group : 0)) +
                                          sizeof(int64_t) * k + 3 * 64);
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
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));
  const bool parallel = gemm::GemmWorkUnits(g.out_channels, g.out_size, k) >= tuning.parallel_minimum_tasks;

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
    const auto run = [&](int64_t begin, int64_t end) {
      // The run's row pointers (tile after tile) and running sums (rows x cols per tile).
      const float* rows[kRunPositions];
      alignas(64) float partial[kRunPositions * kMaxImplicitCols];
      // A partial block's tile output (channels x kMaxImplicitRows) and bias (zero past the
      // group's channels).
      alignas(64) float staged[kMaxImplicitCols * kMaxImplicitRows];
      alignas(64) float staged_bias[kMaxImplicitCols];
      for (int64_t t = begin; t < end; ++t) {
        const int64_t grp = t / (blocks * runs), block = t / runs % blocks, r = t % runs;
        const int64_t tile0 = tiles * r / runs, run_tiles = tiles * (r + 1) / runs - tile0;
        const float* image = src + grp * cg * source_plane;
        const int64_t p_begin = tile0 * shape.rows, p_end = std::min(g.out_size, (tile0 + run_tiles) * shape.rows);
        // Rows past the output's end repeat the tile's first position (read, then discarded).
        int64_t oh = p_begin / out_w, ow = p_begin % out_w;
        for (int64_t i = 0; i < run_tiles * shape.rows; ++i) {
          const int64_t tile_first = i / shape.rows * shape.rows;
          rows[i] = p_begin + i < g.out_size ? image + oh * row_step + ow * g.strides[1] : rows[tile_first];
          if (++ow == out_w) {
            ow = 0;
            ++oh;
          }
        }
        const int64_t m0 = grp * mg + block * shape.cols,
                      channels = std::min<int64_t>(shape.cols, mg - block * shape.cols);
        const float* block_w = packed_w + grp * packed_group + block * shape.cols * k;
        float* run_y = y_image + m0 * g.out_size + p_begin;
        const float* tile_bias = bias != nullptr ? bias + m0 : nullptr;
        if (channels != shape.cols && bias != nullptr) {
          std::fill(staged_bias, staged_bias + shape.cols, 0.0f);
          std::copy(bias + m0, bias + m0 + channels, staged_bias);
          tile_bias = staged_bias;
        }
        for (int64_t k0 = 0; k0 < k; k0 += k_chunk) {
          const int64_t count = std::min(k_chunk, k - k0);
          const bool first = k0 == 0, last = k0 + count == k;
          for (int64_t i = 0; i < run_tiles; ++i) {
            const int64_t p0 = p_begin + i * shape.rows;
            const int valid = static_cast<int>(std::min<int64_t>(shape.rows, g.out_size - p0));
            float* tile_partial = partial + i * shape.rows * shape.cols;
            const float* const* tile_rows = rows + i * shape.rows;
            const float* tile_w = block_w + k0 * shape.cols;
            if (!last || channels == shape.cols) {
              shape.fn(count, offsets + k0, tile_rows, tile_w, tile_partial, first, last, tile_bias, valid,
                       run_y + i * shape.rows, g.out_size);
              continue;
            }
            shape.fn(count, offsets + k0, tile_rows, tile_w, tile_partial, first, last, tile_bias, valid, staged,
                     kMaxImplicitRows);
            for (int64_t j = 0; j < channels; ++j) {
              std::copy(staged + j * kMaxImplicitRows, staged + j * kMaxImplicitRows + valid,
                        run_y + i * shape.rows + j * g.out_size);
            }
          }
        }
        // Elementwise, so applying it per run changes no value.
        if (!epilogue.empty()) epilogue.Apply(run_y, run_y - y, channels, p_end - p_begin, g.out_size);
      }
      return Status::Ok();
    };
    OL_RETURN_IF_ERROR(parallel ? ParallelFor(ctx.parallel(), tasks, ParallelPlan{"conv.implicit_tiles", 1}, run)
                                : run(0, tasks));
  }
  return Status::Ok();
}

}  // namespace conv
}  // namespace onnx_light
