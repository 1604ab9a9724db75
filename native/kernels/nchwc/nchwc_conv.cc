#include "native/kernels/nchwc/nchwc_conv.h"

#include <algorithm>
#include <cmath>

#include "native/executor/parallel_for.h"
#include "native/kernels/gemm/gemm.h"
#include "native/kernels/nchwc/reorder.h"

namespace onnx_light {
namespace nchwc {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Output positions per epilogue call (a multiple of every tile's 3, 4, 6, 8 and 12 rows).
constexpr int64_t kEpiloguePositions = 48;
constexpr int kScalarRows = 4;

// ImplicitTileFn's blocked contract, one output at a time: the same fused multiply-adds in
// k order from +0, then + bias.
void ScalarTile(int64_t k_count, const int64_t* offsets, const float* const* rows, const float* w, const float* bias,
                int valid, int channels, float* y, int64_t ldy, const float* carry_in, float* carry_out,
                const float* residual, bool relu) {
  for (int i = 0; i < valid; ++i) {
    for (int j = 0; j < kBlock; ++j) {
      float acc = carry_in != nullptr ? carry_in[i * kBlock + j] : 0.0f;
      for (int64_t k = 0; k < k_count; ++k) acc = std::fma(rows[i][offsets[k]], w[k * kBlock + j], acc);
      if (carry_out != nullptr) {
        carry_out[i * kBlock + j] = acc;
      } else if (j < channels) {
        float v = acc + (bias != nullptr ? bias[j] : 0.0f);
        if (residual != nullptr) v = v + residual[i * kBlock + j];
        if (relu) v = v > 0.0f || v != v ? v : 0.0f;
        y[i * kBlock + j] = v;
      }
    }
  }
  (void)ldy;  // one block of 16 columns
}

// Where the tiles read X: X itself, or a zero-padded copy (rows x cols per plane or
// block) whose origin is input pixel (-pad_h, -pad_w) (the NCHW driver's rule).
struct Source {
  int64_t rows = 0, cols = 0;
  bool padded = false;
};

Source ChooseSource(const conv::ConvGeometry& g) {
  Source s;
  const int64_t reach_h = (g.out_spatial[0] - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
  const int64_t reach_w = (g.out_spatial[1] - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1;
  s.padded = g.pads_begin[0] > 0 || g.pads_begin[1] > 0 || reach_h - g.pads_begin[0] > g.in_spatial[0] ||
             reach_w - g.pads_begin[1] > g.in_spatial[1];
  s.rows = s.padded ? reach_h : g.in_spatial[0];
  s.cols = s.padded ? reach_w : g.in_spatial[1];
  return s;
}

// Planes [begin, end) of one image (NCHW: channels; blocked: blocks of 16 channels,
// `elems` = 16 floats a position) into the padded layout.
void PadPlanes(const conv::ConvGeometry& g, const Source& s, int64_t elems, const float* x, int64_t begin, int64_t end,
               float* padded) {
  const int64_t in_h = g.in_spatial[0], in_w = g.in_spatial[1], top = g.pads_begin[0], left = g.pads_begin[1];
  const int64_t c0 = std::max<int64_t>(0, left), c1 = std::min(s.cols, in_w + left);
  for (int64_t plane = begin; plane < end; ++plane) {
    const float* in = x + plane * in_h * in_w * elems;
    float* out = padded + plane * s.rows * s.cols * elems;
    std::fill(out, out + s.rows * s.cols * elems, 0.0f);
    for (int64_t r = 0; r < s.rows; ++r) {
      const int64_t ih = r - top;
      if (ih < 0 || ih >= in_h || c1 <= c0) continue;
      std::copy(in + (ih * in_w + c0 - left) * elems, in + (ih * in_w + c1 - left) * elems,
                out + (r * s.cols + c0) * elems);
    }
  }
}

}  // namespace

conv::ImplicitTile ScalarBlockedTile() { return conv::ImplicitTile{kScalarRows, kBlock, nullptr, ScalarTile}; }

PackedNchwcWeights PackedNchwcWeights::Pack(int64_t m, int64_t c, int64_t kh, int64_t kw, const float* w,
                                            const std::function<void(int64_t)>& rows_read) {
  PackedNchwcWeights p;
  p.m = m;
  p.c = c;
  p.kh = kh;
  p.kw = kw;
  const int64_t k = p.k();
  p.tile = conv::ImplicitTileFor(m);
  if (p.tile.blocked_fn != nullptr) {
    p.panels.resize(conv::ImplicitPackedSize(m, k));
    conv::PackImplicitWeights(m, k, w, p.panels.data(), rows_read);
    return p;
  }
  p.tile = ScalarBlockedTile();
  p.panels.assign(RoundUp(m, kBlock) * k, 0.0f);
  for (int64_t block = 0; block < CeilDiv(m, kBlock); ++block) {
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int j = 0; j < kBlock && block * kBlock + j < m; ++j) {
        p.panels[(block * k + kk) * kBlock + j] = w[(block * kBlock + j) * k + kk];
      }
    }
    if (rows_read) rows_read(std::min(m, (block + 1) * kBlock));
  }
  return p;
}

Status NchwcConvForward(KernelContext& ctx, const conv::ConvGeometry& g, bool x_blocked, const float* x,
                        const PackedNchwcWeights& w, const float* bias, float* y, const conv::ConvTuning& tuning,
                        const gemm::Epilogue& epilogue) {
  const conv::ImplicitTile shape = w.tile;
  const int64_t m = g.out_channels, c = g.in_channels, k = w.k(), out_size = g.out_size, out_w = g.out_spatial[1];
  const int64_t out_blocks = CeilDiv(m, kBlock), ldy = out_size * kBlock;
  // Channel blocks of the tile's columns; the last one stores only the 16-lane blocks Y has.
  const int64_t blocks = CeilDiv(m, shape.cols), padded_m = RoundUp(m, shape.cols);
  const int64_t tiles = CeilDiv(out_size, shape.rows);
  const int64_t k_chunk =
      tuning.implicit_chunk_panel_bytes > 0
          ? std::max<int64_t>(1, tuning.implicit_chunk_panel_bytes / (int64_t{sizeof(float)} * shape.cols))
          : 0;
  const int64_t chunks = k_chunk > 0 && k > k_chunk ? CeilDiv(k, k_chunk) : 1, chunk_k = CeilDiv(k, chunks);
  const int64_t elems = x_blocked ? kBlock : 1;               // floats per position of a plane
  const int64_t planes = x_blocked ? CeilDiv(c, kBlock) : c;  // blocks or channel planes
  const Source source = ChooseSource(g);
  const int64_t source_plane = source.rows * source.cols, image_floats = planes * source_plane * elems;
  // Task order: the operand that is larger is streamed once. Position-major (the image
  // larger than the packed weights: early, wide layers): a task is a run of about
  // kEpiloguePositions positions x one channel block, the blocks of a run one after the
  // other, so the run's input rows are reused from L1 by every block while all the
  // weights stay in L2. Block-major (late layers, weights larger): a task is one tile of
  // one block, the tiles of a block one after the other (its weight panel reused).
  // Either order gives each output the same tile and sums.
  const bool position_major = chunks == 1 && image_floats > static_cast<int64_t>(w.panels.size());
  const int64_t task_tiles = chunks > 1       ? std::min(tiles, std::max<int64_t>(1, tuning.implicit_chunk_tiles))
                             : position_major ? std::min(tiles, std::max<int64_t>(1, kEpiloguePositions / shape.rows))
                                              : 1;
  const int64_t tile_groups = CeilDiv(tiles, task_tiles), tasks = blocks * tile_groups;
  const int64_t x_image = planes * g.in_size * elems;
  const bool parallel = gemm::GemmWorkUnits(m, out_size, k) >= tuning.gemm.parallel_minimum_tasks;
  const ParallelPlan tiles_plan{"nchwc.conv_tiles", 1};
  const int participants = parallel ? AvailableParticipants(ctx.parallel(), tiles_plan) : 1;
  const int64_t carry_floats = chunks > 1 ? task_tiles * shape.rows * shape.cols : 0;

  // Scratch: the tap offsets, the bias padded to the tiles' columns, one image's padded
  // copy, the carries.
  ScratchArena arena(ctx.allocator(),
                     sizeof(float) * ((source.padded ? image_floats : 0) + padded_m + participants * carry_floats) +
                         sizeof(int64_t) * k + 4 * 64);
  OL_RETURN_IF_ERROR(arena.status());
  OL_ASSIGN_OR_RETURN(int64_t * offsets, arena.AllocateArray<int64_t>(std::max<int64_t>(k, 1)));
  for (int64_t ch = 0, kk = 0; ch < c; ++ch) {
    const int64_t base = x_blocked ? (ch / kBlock) * source_plane * kBlock + ch % kBlock : ch * source_plane;
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw, ++kk) {
        offsets[kk] = base + (kh * g.dilations[0] * source.cols + kw * g.dilations[1]) * elems;
      }
    }
  }
  OL_ASSIGN_OR_RETURN(float* staged_bias, arena.AllocateArray<float>(padded_m));
  std::fill(staged_bias, staged_bias + padded_m, 0.0f);
  if (bias != nullptr) std::copy(bias, bias + m, staged_bias);
  float* padded = nullptr;
  if (source.padded) {
    OL_ASSIGN_OR_RETURN(padded, arena.AllocateArray<float>(image_floats));
  }
  float* carries = nullptr;
  if (carry_floats > 0) {
    OL_ASSIGN_OR_RETURN(carries, arena.AllocateArray<float>(participants * carry_floats));
  }
  ctx.RecordScratch(static_cast<int64_t>(arena.capacity()));

  const int pad_lanes = static_cast<int>(out_blocks * kBlock - m);  // of Y's last block
  // The residual and Relu (or no activation) run inside the tiles' stores (the same
  // roundings as the epilogue's pass); other activations run as a pass over each run.
  const bool fused = epilogue.bias == nullptr &&
                     (epilogue.activation == gemm::Activation::kNone || epilogue.activation == gemm::Activation::kRelu);
  const bool fused_relu = fused && epilogue.activation == gemm::Activation::kRelu;
  const bool apply_epilogue = !fused && !epilogue.empty();
  const bool finish = apply_epilogue || pad_lanes > 0;
  const int64_t row_step = g.strides[0] * source.cols * elems, col_step = g.strides[1] * elems;
  for (int64_t n = 0; n < g.batch; ++n) {
    const float* src = x + n * x_image;
    if (source.padded) {
      const auto pad = [&](int64_t begin, int64_t end) {
        PadPlanes(g, source, elems, src, begin, end, padded);
        return Status::Ok();
      };
      OL_RETURN_IF_ERROR(parallel ? ParallelFor(ctx.parallel(), planes, ParallelPlan{"nchwc.conv_pad", 1}, pad)
                                  : pad(0, planes));
      ctx.RecordCopy();
      src = padded;
    }
    float* y_image = y + n * out_blocks * ldy;
    const auto run = [&](int participant, int64_t begin, int64_t end) {
      // The captured values the loops read, as locals (the closure is reached through a
      // pointer: GCC reloaded them through it at every tile).
      const conv::ImplicitTile shape_ = shape;
      const int64_t out_size_ = out_size, out_w_ = out_w, row_step_ = row_step, col_step_ = col_step, k_ = k,
                    ldy_ = ldy, chunks_ = chunks, chunk_k_ = chunk_k, tiles_ = tiles, task_tiles_ = task_tiles,
                    tile_groups_ = tile_groups, blocks_ = blocks, out_blocks_ = out_blocks;
      const float* const src_ = src;
      const float* const panels = w.panels.data();
      float* const y_image_ = y_image;
      const float* rows[conv::kMaxImplicitRows];
      float* const carry = carries != nullptr ? carries + participant * carry_floats : nullptr;
      // A run of consecutive positions [pending_p0, + pending_count) of the 16-lane blocks
      // [pending_b0, + pending_nb) of Y: the epilogue on each block's run (contiguous), then
      // the pad lanes.
      int64_t pending_p0 = 0, pending_count = 0, pending_b0 = 0, pending_nb = 0;
      const auto flush = [&] {
        for (int64_t b = pending_b0; b < pending_b0 + pending_nb && pending_count > 0; ++b) {
          float* run_y = y_image + b * ldy + pending_p0 * kBlock;
          if (apply_epilogue) epilogue.Apply(run_y, run_y - y, 1, pending_count * kBlock, pending_count * kBlock);
          if (b == out_blocks - 1 && pad_lanes > 0) {
            for (int64_t p = 0; p < pending_count; ++p) {
              std::fill(run_y + p * kBlock + (kBlock - pad_lanes), run_y + (p + 1) * kBlock, 0.0f);
            }
          }
        }
        pending_count = 0;
      };
      for (int64_t t = begin; t < end; ++t) {
        const int64_t block = position_major ? t % blocks_ : t / tile_groups_;
        const int64_t first_tile = (position_major ? t / blocks_ : t % tile_groups_) * task_tiles_,
                      last_tile = std::min(tiles_, first_tile + task_tiles_);
        const int64_t m0 = block * shape_.cols;
        const int channels = static_cast<int>(std::min<int64_t>(shape_.cols, out_blocks_ * kBlock - m0));
        const float* block_w = panels + block * shape_.cols * k_;
        const float* tile_bias = staged_bias + m0;
        float* block_y = y_image_ + (m0 / kBlock) * ldy_;
        for (int64_t chunk = 0; chunk < chunks_; ++chunk) {
          const int64_t k0 = chunk * chunk_k_, k_count = std::min(chunk_k_, k_ - k0);
          const bool last = chunk + 1 == chunks_;
          for (int64_t tile = first_tile; tile < last_tile; ++tile) {
            const int64_t p0 = tile * shape_.rows, valid = std::min<int64_t>(shape_.rows, out_size_ - p0);
            // Rows past the output's end repeat position p0 (read, then discarded).
            int64_t oh = p0 / out_w_, ow = p0 % out_w_;
            const float* row = src_ + oh * row_step_ + ow * col_step_;
            for (int i = 0; i < valid; ++i) {
              rows[i] = row;
              row += col_step_;
              if (++ow == out_w_) {
                ow = 0;
                row = src_ + ++oh * row_step_;
              }
            }
            for (int i = static_cast<int>(valid); i < shape_.rows; ++i) rows[i] = rows[0];
            float* tile_carry = carry != nullptr ? carry + (tile - first_tile) * shape_.rows * shape_.cols : nullptr;
            float* tile_y = block_y + p0 * kBlock;
            const float* tile_z = fused && epilogue.residual != nullptr ? epilogue.residual + (tile_y - y) : nullptr;
            shape_.blocked_fn(k_count, offsets + k0, rows, block_w + k0 * shape_.cols, tile_bias,
                              static_cast<int>(valid), channels, tile_y, ldy_, chunk > 0 ? tile_carry : nullptr,
                              last ? nullptr : tile_carry, tile_z, fused_relu);
            if (!last || !finish) continue;
            const int64_t b0 = m0 / kBlock, nb = channels / kBlock;
            if (pending_count > 0 &&
                (pending_b0 != b0 || pending_p0 + pending_count != p0 || pending_count >= kEpiloguePositions)) {
              flush();
            }
            if (pending_count == 0) {
              pending_p0 = p0;
              pending_b0 = b0;
              pending_nb = nb;
            }
            pending_count += valid;
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

}  // namespace nchwc
}  // namespace onnx_light
