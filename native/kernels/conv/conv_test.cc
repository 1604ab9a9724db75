// Conv and ConvTranspose against naive double-precision references written from the ONNX
// definitions, for 1-D/2-D/3-D shapes, groups, depthwise, dilations, strides, pads and
// auto_pad; bit-identical for 1, 2, 4 and 8 participants.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"
#include "native/kernels/conv/conv_float.h"
#include "native/kernels/conv/depthwise.h"
#include "native/kernels/conv/few_channels.h"
#include "native/kernels/conv/implicit_gemm.h"
#include "native/kernels/gemm/epilogue.h"
#include "native/kernels/gemm/microkernel.h"
#include "native/registry/kernel_test_checks.h"

namespace onnx_light {
namespace {

using testing::KernelTester;
using testing::MakeTensor;

std::vector<float> Random(int64_t n, uint32_t seed) { return testing::RandomFloats(n, seed); }

int64_t Product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// Multi-index of flat position `flat` in `dims`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    idx[i] = flat % dims[i];
    flat /= dims[i];
  }
  return idx;
}

int64_t Flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + idx[i];
  return f;
}

struct ConvCase {
  std::vector<int64_t> x, w;  // shapes
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;  // pads: begin..., end...
  bool bias = true;
  std::string auto_pad;  // empty: explicit pads
};

// Y[n, m, o] = B[m] + sum_{c, k} W[m, c, k] X[n, g*C/G + c, o*s - p + k*d].
std::vector<double> ReferenceConv(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& b, const std::vector<int64_t>& pads,
                                  const std::vector<int64_t>& out_spatial) {
  const size_t r = c.x.size() - 2;
  const int64_t n_batch = c.x[0], channels = c.x[1], m_out = c.w[0], cg = c.w[1];
  const std::vector<int64_t> in_sp(c.x.begin() + 2, c.x.end()), k_sp(c.w.begin() + 2, c.w.end());
  const int64_t out_size = Product(out_spatial), k_size = Product(k_sp), in_size = Product(in_sp);
  std::vector<double> y(n_batch * m_out * out_size);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < m_out; ++m) {
      const int64_t grp = m / (m_out / c.group);
      for (int64_t o = 0; o < out_size; ++o) {
        const auto oi = Unflatten(o, out_spatial);
        double s = c.bias ? b[m] : 0.0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          for (int64_t k = 0; k < k_size; ++k) {
            const auto ki = Unflatten(k, k_sp);
            std::vector<int64_t> ii(r);
            bool inside = true;
            for (size_t a = 0; a < r; ++a) {
              ii[a] = oi[a] * (c.strides.empty() ? 1 : c.strides[a]) - pads[a] +
                      ki[a] * (c.dilations.empty() ? 1 : c.dilations[a]);
              inside = inside && ii[a] >= 0 && ii[a] < in_sp[a];
            }
            if (!inside) continue;
            s += double(w[(m * cg + ci) * k_size + k]) *
                 x[(n * channels + grp * cg + ci) * in_size + Flatten(ii, in_sp)];
          }
        }
        y[(n * m_out + m) * out_size + o] = s;
      }
    }
  }
  (void)channels;
  return y;
}

// Thresholds forced low so that every participant count takes the parallel paths (Conv
// also has the depthwise threshold; ConvTranspose's schema lacks it).
void ForceParallel(KernelTester& t, bool conv) {
  t.Tuning(param::kMinimumTasks, int64_t{1});
  if (conv) t.Tuning(param::kDepthwiseMinimumMultiplyAdds, int64_t{1});
}

bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0;
}

// A Conv tester for case `c`; W is a constant (prepacked at kernel creation) or a feed.
KernelTester MakeConvTester(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                            const std::vector<float>& b, bool constant_w) {
  KernelTester t("Conv", 22);
  t.Input(MakeTensor<float>(Shape(c.x), x));
  if (constant_w) {
    t.ConstantInput(MakeTensor<float>(Shape(c.w), w));
  } else {
    t.Input(MakeTensor<float>(Shape(c.w), w));
  }
  if (c.bias) t.Input(MakeTensor<float>({c.w[0]}, b));
  t.Attr("group", c.group);
  if (!c.strides.empty()) t.Attr("strides", c.strides);
  if (!c.dilations.empty()) t.Attr("dilations", c.dilations);
  if (!c.pads.empty()) t.Attr("pads", c.pads);
  if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad);
  ForceParallel(t, true);
  return t;
}

// Checks against the reference, for 1, 2, 4 and 8 participants, with W a feed and with W
// constant (prepacked weights must give bit-identical results).
void CheckConv(const ConvCase& c, const std::vector<int64_t>& expected_pads, const std::vector<int64_t>& expected_out) {
  const auto x = Random(Product(c.x), 1), w = Random(Product(c.w), 2), b = Random(c.w[0], 3);
  std::vector<int64_t> y_shape = {c.x[0], c.w[0]};
  y_shape.insert(y_shape.end(), expected_out.begin(), expected_out.end());
  KernelTester fed = MakeConvTester(c, x, w, b, false);
  const auto got = testing::SerialMatchesParticipants<float>(fed, Shape(y_shape));
  KernelTester constant = MakeConvTester(c, x, w, b, true);
  EXPECT_TRUE(BitIdentical(got, testing::SerialMatchesParticipants<float>(constant, Shape(y_shape))))
      << "constant W vs fed W";
  const auto want = ReferenceConv(c, x, w, b, expected_pads, expected_out);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
}

TEST(Conv, TwoDimensionalShapes) {
  // 3x3 pad 1, ResNet-like block; 1x1 pointwise; strided 7x7; dilated; grouped.
  CheckConv({{1, 16, 14, 14}, {32, 16, 3, 3}, 1, {}, {}, {1, 1, 1, 1}}, {1, 1}, {14, 14});
  CheckConv({{2, 24, 9, 9}, {40, 24, 1, 1}}, {0, 0}, {9, 9});
  CheckConv({{1, 3, 23, 23}, {8, 3, 7, 7}, 1, {2, 2}, {}, {3, 3, 3, 3}}, {3, 3}, {12, 12});
  CheckConv({{1, 4, 11, 13}, {6, 4, 3, 3}, 1, {1, 2}, {2, 1}, {0, 1, 2, 0}}, {0, 1}, {9, 6});
  CheckConv({{2, 8, 10, 10}, {12, 2, 3, 3}, 4, {1, 1}, {}, {1, 1, 1, 1}}, {1, 1}, {10, 10});
  CheckConv({{1, 5, 40, 37}, {7, 5, 2, 2}, 1, {1, 1}, {}, {}, false}, {0, 0}, {39, 36});
}

TEST(Conv, SmallOutputsManyChannelsAndOddShapes) {
  // Few output positions and many channels: the tasks split the output channels too.
  CheckConv({{1, 32, 7, 7}, {96, 32, 3, 3}, 1, {}, {}, {1, 1, 1, 1}}, {1, 1}, {7, 7});
  CheckConv({{1, 64, 5, 5}, {200, 64, 1, 1}}, {0, 0}, {5, 5});
  CheckConv({{2, 16, 3, 3}, {50, 8, 3, 3}, 2, {}, {}, {1, 1, 1, 1}}, {1, 1}, {3, 3});
  // Prime sizes everywhere; 1x1 image and kernel; a two-element reduction.
  CheckConv({{1, 7, 13, 11}, {29, 7, 3, 3}, 1, {2, 1}, {}, {1, 2, 0, 1}}, {1, 2}, {6, 12});
  CheckConv({{3, 8, 1, 1}, {17, 8, 1, 1}}, {0, 0}, {1, 1});
  CheckConv({{1, 2, 31, 37}, {5, 2, 1, 1}, 1, {}, {}, {}, false}, {0, 0}, {31, 37});
  // Dilations with pads larger than the kernel's reach on one side.
  CheckConv({{1, 6, 9, 8}, {11, 6, 2, 3}, 1, {1, 1}, {3, 2}, {3, 0, 2, 4}}, {3, 0}, {11, 8});
}

TEST(Conv, PointwiseAtLateSpatialSizes) {
  // 1x1 convolutions at 7x7 and 14x14 (49 and 196 output positions: the GEMM's partial
  // column tiles, masked vectors and column form), channel counts that are not multiples of
  // any register tile's rows, K across two K blocks of every microkernel, two images.
  CheckConv({{1, 40, 7, 7}, {50, 40, 1, 1}}, {0, 0}, {7, 7});
  CheckConv({{2, 300, 7, 7}, {26, 300, 1, 1}}, {0, 0}, {7, 7});
  CheckConv({{1, 24, 14, 14}, {37, 24, 1, 1}}, {0, 0}, {14, 14});
  CheckConv({{1, 9, 3, 5}, {61, 9, 1, 1}}, {0, 0}, {3, 5});
}

TEST(Conv, ImplicitGemmShapes) {
  // Output channels per group a multiple of 32 (the implicit-GEMM path on AVX-512): strides,
  // dilations, asymmetric pads (also past the input's end), groups, a 7x7/2 layer (5 input
  // channels: with 4 or fewer it is a stem, few_channels.h),
  // output sizes that are not a multiple of the 12-position tile, a 1x1 kernel with stride.
  CheckConv({{1, 5, 29, 31}, {32, 5, 7, 7}, 1, {2, 2}, {}, {3, 3, 3, 3}}, {3, 3}, {15, 16});
  CheckConv({{2, 16, 9, 9}, {64, 8, 3, 3}, 2, {}, {}, {1, 1, 1, 1}}, {1, 1}, {9, 9});
  CheckConv({{1, 5, 11, 10}, {32, 5, 3, 2}, 1, {2, 1}, {2, 3}, {0, 2, 3, 1}}, {0, 2}, {5, 10});
  CheckConv({{1, 7, 5, 6}, {64, 7, 2, 2}, 1, {1, 1}, {}, {0, 0, 0, 0}, false}, {0, 0}, {4, 5});
  CheckConv({{1, 12, 13, 13}, {32, 12, 1, 1}, 1, {2, 2}, {}, {}}, {0, 0}, {7, 7});
  CheckConv({{1, 6, 4, 4}, {32, 6, 3, 3}, 1, {1, 1}, {}, {2, 2, 2, 2}}, {2, 2}, {6, 6});
}

// Every register tile of the implicit GEMM against ImplicitTileFn's contract evaluated in
// k order with one fused multiply-add per tap (what the tiles do per lane), bit for bit,
// for K counts that do and do not fill the tiles' 4-step main loop and for every row
// layout a tile may compile a loop for (scattered rows; one run of positions 1 or 2 apart;
// two such runs split after each row; three runs; spacing 3);
// positions at and past `valid` (and the row padding of ldy) and channels at and past
// `channels` (all columns, or a group's last block cut at 1 .. cols - 1, e.g. 40 of 48)
// stay untouched; the same sums in K chunks with the raw sums carried between them give
// the same bits.
class ImplicitTileVariantTest : public ::testing::TestWithParam<IsaVariant<conv::ImplicitTile>> {};
// Empty off x86-64 (no tile there): convolutions take im2col + GEMM.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ImplicitTileVariantTest);

TEST_P(ImplicitTileVariantTest, MatchesTheContractInKOrder) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const conv::ImplicitTile tile = GetParam().impl;
  const std::vector<float> input = Random(4096, 11);
  const float kUntouched = -12345.0f;
  // Row layouts: first element of row i relative to input + 100.
  std::vector<std::vector<int64_t>> layouts;
  layouts.push_back({});
  for (int i = 0; i < tile.rows; ++i) layouts.back().push_back(100 * i + (i * 13) % 7);  // scattered
  for (int spacing : {1, 2, 3}) {
    for (int split = 1; split <= tile.rows; ++split) {  // split == rows: one run
      layouts.push_back({});
      for (int i = 0; i < tile.rows; ++i)
        layouts.back().push_back(i < split ? spacing * i : 500 + spacing * (i - split));
    }
  }
  layouts.push_back({});
  for (int i = 0; i < tile.rows; ++i) layouts.back().push_back(1000 * (i / 3) + (i % 3));  // runs of 3
  for (int64_t k_count : {1, 4, 7, 37}) {  // the tiles step K by 4: none but remainder, none but whole steps, both
    for (int valid = tile.rows; valid >= 1; --valid) {  // partial tiles may run loops of fewer rows
      for (bool with_bias : {false, true}) {
        for (const std::vector<int64_t>& layout : layouts) {
          std::vector<int64_t> offsets(k_count);
          for (int64_t k = 0; k < k_count; ++k) offsets[k] = (k * 37) % 97;
          std::vector<const float*> rows(tile.rows);
          for (int i = 0; i < tile.rows; ++i) rows[i] = input.data() + 100 + layout[i];
          const std::vector<float> w = Random(k_count * tile.cols, 12), bias = Random(tile.cols, 13);
          const int64_t ldy = valid + 3;
          // Every other case a partial block, its channel count varying with valid and layout.
          const int layout_index = static_cast<int>(&layout - layouts.data());
          const int channels = (valid + layout_index) % 2 == 0 ? tile.cols : 1 + (7 * valid + layout_index) % tile.cols;
          std::vector<float> y(tile.cols * ldy, kUntouched);
          tile.fn(k_count, offsets.data(), rows.data(), w.data(), with_bias ? bias.data() : nullptr, valid, channels,
                  y.data(), ldy, nullptr, nullptr);
          // K blocking: the same sums in 1, 2 and 3 chunks (the last one shorter, then
          // one of a single k), raw sums carried between chunks, give the same bits.
          const int64_t half = (k_count + 1) / 2, third = (k_count + 2) / 3;
          for (const std::vector<int64_t>& cuts : std::vector<std::vector<int64_t>>{
                   {k_count}, {half, k_count}, {third, 2 * third, k_count}, {k_count - 1, k_count}}) {
            // Chunks of at least one k each (k_count 1 has one chunk, 4 has no 3 + 1 ... cut).
            if (cuts[0] == 0 || !std::is_sorted(cuts.begin(), cuts.end(), std::less_equal<int64_t>())) continue;
            std::vector<float> chunked(tile.cols * ldy, kUntouched), carry(tile.rows * tile.cols, kUntouched);
            for (size_t c = 0; c < cuts.size(); ++c) {
              const int64_t k0 = c == 0 ? 0 : cuts[c - 1];
              const bool last = c + 1 == cuts.size();
              tile.fn(cuts[c] - k0, offsets.data() + k0, rows.data(), w.data() + k0 * tile.cols,
                      with_bias ? bias.data() : nullptr, valid, channels, chunked.data(), ldy,
                      c == 0 ? nullptr : carry.data(), last ? nullptr : carry.data());
              if (!last) {
                ASSERT_EQ(chunked, std::vector<float>(tile.cols * ldy, kUntouched)) << "y written early";
              }
            }
            ASSERT_TRUE(std::memcmp(chunked.data(), y.data(), sizeof(float) * y.size()) == 0)
                << GetParam().name << " k_count " << k_count << " valid " << valid << " chunks " << cuts.size()
                << " layout " << layout_index << " channels " << channels;
          }
          for (int j = 0; j < tile.cols; ++j) {
            for (int64_t i = 0; i < ldy; ++i) {
              float expected = kUntouched;
              if (i < valid && j < channels) {
                float acc = 0.0f;
                for (int64_t k = 0; k < k_count; ++k)
                  acc = __builtin_fmaf(rows[i][offsets[k]], w[k * tile.cols + j], acc);
                expected = acc + (with_bias ? bias[j] : 0.0f);
              }
              ASSERT_EQ(y[j * ldy + i], expected)
                  << GetParam().name << " k_count " << k_count << " valid " << valid << " bias " << with_bias
                  << " layout " << layout_index << " channels " << channels << " channel " << j << " position " << i;
            }
          }
        }
      }
    }
  }
}

// The same tiles storing blocked Y (ImplicitTile::blocked_fn, the NCHW16c layout of
// nchwc/README.md): the contract's sums in k order, bit for bit, at y[(j / 16) * ldy + 16 i
// + j % 16] for i < valid and j < channels (whole blocks: 16, 32 ... up to the tile's
// columns), nothing else touched; row layouts of a blocked input (runs of positions 16 and
// 32 floats apart, split after each row; scattered); K in chunks with carried sums gives
// the same bits.
TEST_P(ImplicitTileVariantTest, BlockedStoreMatchesTheContractInKOrder) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const conv::ImplicitTile tile = GetParam().impl;
  ASSERT_NE(tile.blocked_fn, nullptr) << GetParam().name;
  const std::vector<float> input = Random(8192, 21);
  const float kUntouched = -12345.0f;
  std::vector<std::vector<int64_t>> layouts;
  layouts.push_back({});
  for (int i = 0; i < tile.rows; ++i) layouts.back().push_back(100 * i + (i * 13) % 7);  // scattered
  for (int spacing : {1, 16, 32}) {
    for (int split = 1; split <= tile.rows; ++split) {
      layouts.push_back({});
      for (int i = 0; i < tile.rows; ++i)
        layouts.back().push_back(i < split ? spacing * i : 1000 + spacing * (i - split));
    }
  }
  for (int64_t k_count : {1, 4, 7, 37}) {
    for (int valid = tile.rows; valid >= 1; --valid) {
      for (bool with_bias : {false, true}) {
        for (const std::vector<int64_t>& layout : layouts) {
          const int layout_index = static_cast<int>(&layout - layouts.data());
          std::vector<int64_t> offsets(k_count);
          for (int64_t k = 0; k < k_count; ++k) offsets[k] = (k * 37) % 97 * 16 + k % 16;
          std::vector<const float*> rows(tile.rows);
          for (int i = 0; i < tile.rows; ++i) rows[i] = input.data() + 100 + layout[i];
          const std::vector<float> w = Random(k_count * tile.cols, 12), bias = Random(tile.cols, 13);
          const int64_t ldy = 16 * (valid + 3);
          // Every other case fewer blocks than the tile's columns (a conv's last, partial block).
          const int blocks = tile.cols / 16;
          const int channels = (valid + layout_index) % 2 == 0 ? tile.cols : 16 * (1 + (valid + layout_index) % blocks);
          // Residual and Relu in the store: none, residual, Relu, both (by layout).
          const bool with_residual = layout_index % 4 == 1 || layout_index % 4 == 3, relu = layout_index % 4 >= 2;
          std::vector<float> z = Random(blocks * ldy, 14);
          z[5] = std::numeric_limits<float>::quiet_NaN();  // Relu keeps NaN
          const float* residual = with_residual ? z.data() : nullptr;
          std::vector<float> y(blocks * ldy, kUntouched);
          tile.blocked_fn(k_count, offsets.data(), rows.data(), w.data(), with_bias ? bias.data() : nullptr, valid,
                          channels, y.data(), ldy, nullptr, nullptr, residual, relu);
          const int64_t half = (k_count + 1) / 2;
          if (half < k_count) {
            std::vector<float> chunked(blocks * ldy, kUntouched), carry(tile.rows * tile.cols, kUntouched);
            tile.blocked_fn(half, offsets.data(), rows.data(), w.data(), with_bias ? bias.data() : nullptr, valid,
                            channels, chunked.data(), ldy, nullptr, carry.data(), residual, relu);
            ASSERT_EQ(chunked, std::vector<float>(blocks * ldy, kUntouched)) << "y written early";
            tile.blocked_fn(k_count - half, offsets.data() + half, rows.data(), w.data() + half * tile.cols,
                            with_bias ? bias.data() : nullptr, valid, channels, chunked.data(), ldy, carry.data(),
                            nullptr, residual, relu);
            ASSERT_TRUE(std::memcmp(chunked.data(), y.data(), sizeof(float) * y.size()) == 0)
                << GetParam().name << " chunked, k_count " << k_count << " valid " << valid;
          }
          for (int j = 0; j < tile.cols; ++j) {
            for (int64_t i = 0; i < ldy / 16; ++i) {
              float expected = kUntouched;
              if (i < valid && j < channels) {
                float acc = 0.0f;
                for (int64_t k = 0; k < k_count; ++k)
                  acc = __builtin_fmaf(rows[i][offsets[k]], w[k * tile.cols + j], acc);
                expected = acc + (with_bias ? bias[j] : 0.0f);
                if (with_residual) expected = expected + z[(j / 16) * ldy + i * 16 + j % 16];
                if (relu) expected = expected > 0.0f || expected != expected ? expected : 0.0f;
              }
              const float got = y[(j / 16) * ldy + i * 16 + j % 16];
              if (expected != expected) {
                ASSERT_NE(got, got) << GetParam().name << " NaN kept, position " << i << " channel " << j;
                continue;
              }
              ASSERT_FALSE(relu && std::signbit(got) && got == 0.0f) << "Relu gives +0";
              ASSERT_EQ(got, expected) << GetParam().name << " k_count " << k_count << " valid " << valid << " bias "
                                       << with_bias << " layout " << layout_index << " channels " << channels
                                       << " channel " << j << " position " << i;
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, ImplicitTileVariantTest, ::testing::ValuesIn(conv::ImplicitTileVariants()),
                         IsaVariantTestName<conv::ImplicitTile>);

// K blocking (conv.implicit_chunk_panel_bytes) gives the bits of the unblocked convolution at every
// participant count, for K in 1, 2 and 3 chunks (equal and with a shorter last one) and one
// chunk per k; channel counts that take each tile of the enabled ISA (AVX-512: 64 -> 6x64,
// 32 -> 12x32, 16 -> 12x16, 40 -> 8x48 with its last 8 columns padded; AVX2: 64, 32 -> 3x32,
// 16, 40 -> 6x16), outputs of more than conv.implicit_chunk_tiles tiles, batch 2, with and
// without bias and padding. (Run under ONNX_LIGHT_MAX_ISA=avx2 too for the AVX2 tiles.)
TEST(Conv, ImplicitGemmKChunksGiveTheUnchunkedBits) {
  constexpr int64_t kChannels = 13, kK = kChannels * 9;  // 117
  for (int64_t m : {64, 32, 16, 40}) {
    if (!conv::ImplicitGemmApplies(2, m, kChannels, 9)) {
      GTEST_SKIP() << "no implicit GEMM on this CPU (ISA capped below AVX2): nothing to chunk";
    }
    for (bool bias : {true, false}) {
      const ConvCase c{{2, kChannels, 15, 16}, {m, kChannels, 3, 3}, 1, {}, {}, {1, 0, 1, 2}, bias};
      const auto x = Random(Product(c.x), 1), w = Random(Product(c.w), 2), b = Random(m, 3);
      std::vector<float> unchunked;
      for (int64_t chunk : {int64_t{1} << 30, kK, (kK + 1) / 2, kK / 3, int64_t{40}, int64_t{1}}) {
        for (int participants : {1, 2, 3}) {
          KernelTester t = MakeConvTester(c, x, w, b, true);
          // In bytes of panel: exactly `chunk` k of this tile's columns.
          t.Tuning(conv::kImplicitChunkPanelBytesParam, chunk * 4 * conv::ImplicitTileFor(m).cols);
          auto run = t.Run(participants);
          ASSERT_TRUE(run.ok()) << run.status().ToString();
          const std::vector<float> got = testing::ToVector<float>(run->at(0).tensor());
          if (unchunked.empty()) unchunked = got;
          EXPECT_TRUE(BitIdentical(got, unchunked))
              << "channels " << m << " bias " << bias << " k_chunk " << chunk << " participants " << participants;
        }
      }
      const auto want = ReferenceConv(c, x, w, b, {1, 0, 1, 2}, {15, 16});
      ASSERT_EQ(unchunked.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(unchunked[i], want[i], 1e-4 * (1 + std::fabs(want[i])));
      unchunked.clear();
    }
  }
}

// conv.implicit_chunk_tiles only regroups the tiles of a K-blocked convolution into tasks:
// every value gives the same bits, at every participant count (40 tiles of 6 positions, or
// 80 of 3 on AVX2: 16 and 7 leave a partial last task, 256 makes one task per channel block).
TEST(Conv, ImplicitGemmChunkTilesGiveTheSameBits) {
  constexpr int64_t kChannels = 13, kK = kChannels * 9;
  for (int64_t m : {64, 40}) {
    if (!conv::ImplicitGemmApplies(2, m, kChannels, 9)) {
      GTEST_SKIP() << "no implicit GEMM on this CPU (ISA capped below AVX2): no chunk tiles";
    }
    const ConvCase c{{2, kChannels, 15, 16}, {m, kChannels, 3, 3}, 1, {}, {}, {1, 0, 1, 2}, true};
    const auto x = Random(Product(c.x), 4), w = Random(Product(c.w), 5), b = Random(m, 6);
    std::vector<float> first;
    for (int64_t tiles : {conv::kConvImplicitChunkTiles, int64_t{1}, int64_t{7}, int64_t{256}}) {
      for (int participants : {1, 2, 3}) {
        KernelTester t = MakeConvTester(c, x, w, b, true);
        t.Tuning(conv::kImplicitChunkPanelBytesParam, (kK / 3) * 4 * conv::ImplicitTileFor(m).cols);  // 3 chunks
        t.Tuning(conv::kImplicitChunkTilesParam, tiles);
        auto run = t.Run(participants);
        ASSERT_TRUE(run.ok()) << run.status().ToString();
        const std::vector<float> got = testing::ToVector<float>(run->at(0).tensor());
        if (first.empty()) first = got;
        EXPECT_TRUE(BitIdentical(got, first))
            << "channels " << m << " chunk tiles " << tiles << " participants " << participants;
      }
    }
    const auto want = ReferenceConv(c, x, w, b, {1, 0, 1, 2}, {15, 16});
    ASSERT_EQ(first.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(first[i], want[i], 1e-4 * (1 + std::fabs(want[i])));
  }
}

TEST(Conv, ImplicitTileForPicksTheTileWithTheFewestPaddedColumns) {
  struct Expected {
    int64_t channels;
    int avx512_rows, avx512_cols, avx2_rows, avx2_cols;  // best ISA AVX-512 / AVX2
  };
  // Ties go to the earlier listed tile (6x64, 12x32, 8x48, 12x16, 3x32, 6x16).
  const Expected cases[] = {{32, 12, 32, 3, 32}, {64, 6, 64, 3, 32},  {96, 12, 32, 3, 32},  {128, 6, 64, 3, 32},
                            {16, 12, 16, 6, 16}, {48, 8, 48, 6, 16},  {24, 12, 32, 3, 32},  {40, 8, 48, 6, 16},
                            {72, 12, 16, 6, 16}, {8, 12, 16, 6, 16},  {13, 12, 16, 6, 16},  {33, 8, 48, 6, 16},
                            {120, 6, 64, 3, 32}, {80, 12, 16, 6, 16}, {112, 12, 16, 6, 16}, {144, 8, 48, 6, 16},
                            {192, 6, 64, 3, 32}, {320, 6, 64, 3, 32}, {240, 8, 48, 6, 16},  {672, 12, 32, 3, 32}};
  for (const Expected& c : cases) {
    const conv::ImplicitTile tile = conv::ImplicitTileFor(c.channels);
    if (!IsaEnabled(Isa::kAvx2)) {
      EXPECT_EQ(tile.fn, nullptr) << c.channels;
      continue;
    }
    const bool avx512 = IsaEnabled(Isa::kAvx512);
    EXPECT_EQ(tile.rows, avx512 ? c.avx512_rows : c.avx2_rows) << c.channels;
    EXPECT_EQ(tile.cols, avx512 ? c.avx512_cols : c.avx2_cols) << c.channels;
  }
  EXPECT_EQ(conv::ImplicitTileFor(0).fn, nullptr);
}

TEST(Conv, ImplicitGemmTakesChannelCountsItPadsByLessThanHalf) {
  const bool avx2 = IsaEnabled(Isa::kAvx2);
  for (int64_t channels : {9, 13, 16, 24, 40, 48, 72, 80, 112}) {
    EXPECT_EQ(conv::ImplicitGemmApplies(2, channels, 8, 9), avx2) << channels;
  }
  // 8 or fewer channels pad a 16-column tile by half or more: im2col + GEMM.
  for (int64_t channels : {1, 5, 8}) EXPECT_FALSE(conv::ImplicitGemmApplies(2, channels, 8, 9)) << channels;
  // Depthwise, 1x1 kernels and other ranks never take it.
  EXPECT_FALSE(conv::ImplicitGemmApplies(2, 40, 1, 9));
  EXPECT_FALSE(conv::ImplicitGemmApplies(2, 40, 8, 1));
  EXPECT_FALSE(conv::ImplicitGemmApplies(1, 40, 8, 3));
}

TEST(Conv, ImplicitGemmAnyChannelCount) {
  // Channels per group that no tile divides (the last block padded, its stores limited to
  // the real channels) and ones that need none, with strides, pads, groups and biases;
  // MobileNetV3 / EfficientNet-like 3x3 24 -> 40 at 28x28 (reduced).
  for (int64_t m : {8, 16, 24, 40, 48, 72, 80, 144, 13, 37, 57}) {
    SCOPED_TRACE(m);
    CheckConv({{1, 6, 9, 11}, {m, 6, 3, 3}, 1, {}, {}, {1, 1, 1, 1}}, {1, 1}, {9, 11});
    CheckConv({{2, 5, 10, 7}, {m, 5, 3, 3}, 1, {2, 2}, {}, {0, 1, 1, 0}, false}, {0, 1}, {5, 3});
  }
  CheckConv({{1, 10, 8, 8}, {80, 5, 3, 3}, 2, {}, {}, {1, 1, 1, 1}}, {1, 1}, {8, 8});
  CheckConv({{1, 14, 7, 9}, {42, 7, 5, 5}, 2, {2, 2}, {}, {2, 2, 2, 2}}, {2, 2}, {4, 5});
  CheckConv({{1, 24, 14, 14}, {40, 24, 3, 3}, 1, {}, {}, {1, 1, 1, 1}}, {1, 1}, {14, 14});
}

TEST(Conv, PaddedChannelBlocksGiveTheBitsOfTheUnpaddedConvolution) {
  // Every tile sums each output in k order, then adds the bias: channel j of a
  // convolution does not depend on how many channels it has around it. 40 channels (a
  // padded block on AVX-512 and AVX2) against their first 32 (no padding) and 72 against
  // their first 64, bit for bit.
  for (const auto& [m, prefix] : {std::pair<int64_t, int64_t>{40, 32}, {72, 64}}) {
    const std::vector<int64_t> x_shape = {1, 8, 11, 13}, w_shape = {m, 8, 3, 3};
    const auto x = Random(Product(x_shape), 21), w = Random(Product(w_shape), 22), b = Random(m, 23);
    const auto run = [&](int64_t channels) {
      KernelTester t("Conv", 22);
      t.Input(MakeTensor<float>(Shape(x_shape), x))
          .Input(MakeTensor<float>({channels, 8, 3, 3}, std::vector<float>(w.begin(), w.begin() + channels * 72)))
          .Input(MakeTensor<float>({channels}, std::vector<float>(b.begin(), b.begin() + channels)))
          .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
      ForceParallel(t, true);
      return testing::SerialMatchesParticipants<float>(t, Shape({1, channels, 11, 13}));
    };
    const auto all = run(m), first = run(prefix);
    ASSERT_EQ(first.size(), static_cast<size_t>(prefix * 11 * 13));
    EXPECT_TRUE(BitIdentical(first, std::vector<float>(all.begin(), all.begin() + prefix * 11 * 13))) << m;
  }
}

// The few-input-channel direct path (few_channels.h) against the double-precision
// reference: 1 to 4 input channels per group, strides 1 to 3, dilations 1 and 2, 3x3, 7x7
// and uneven kernels, pads on every side (asymmetric, and past the kernel's reach), odd
// sizes (rows shorter than a vector, rows of a few vectors and a tail), output channel
// counts with a partial block (5, 13) and without, groups, several images, with and
// without bias; bit-identical for 1, 2, 4 and 8 participants (tasks split strips of rows
// and channel blocks; a participant restages rows only for a new strip).
TEST(Conv, FewChannelsShapes) {
  for (int64_t c : {1, 2, 3, 4}) {
    for (int64_t m : {4, 13, 16}) {
      SCOPED_TRACE(::testing::Message() << "C " << c << " M " << m);
      // 3x3 stride 2 pad 1 (the MobileNetV3 / EfficientNet stem), odd sizes.
      CheckConv({{1, c, 23, 19}, {m, c, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {12, 10});
      // 3x3 stride 1, dilation 2, asymmetric pads, no bias.
      CheckConv({{2, c, 11, 37}, {m, c, 3, 3}, 1, {1, 1}, {2, 2}, {2, 0, 1, 3}, false}, {2, 0}, {10, 36});
    }
    SCOPED_TRACE(::testing::Message() << "C " << c);
    // 7x7 stride 2 pad 3 (the ResNet stem: 3 channels in, 64 out); with dilation 2.
    if (c == 3) CheckConv({{1, c, 29, 30}, {64, c, 7, 7}, 1, {2, 2}, {}, {3, 3, 3, 3}}, {3, 3}, {15, 15});
    CheckConv({{1, c, 26, 21}, {8, c, 7, 7}, 1, {2, 2}, {2, 2}, {3, 3, 3, 3}, false}, {3, 3}, {10, 8});
    // Uneven kernel and strides, stride 3, pads wider than the kernel on one side.
    CheckConv({{1, c, 17, 41}, {5, c, 2, 5}, 1, {3, 2}, {1, 1}, {0, 2, 4, 1}}, {0, 2}, {7, 20});
    CheckConv({{1, c, 9, 9}, {6, c, 3, 3}, 1, {3, 3}, {2, 1}, {3, 3, 3, 3}}, {3, 3}, {4, 5});
    // One output column, one output row; a 1-wide input.
    CheckConv({{1, c, 3, 3}, {7, c, 3, 3}, 1, {1, 1}, {}, {0, 0, 0, 0}}, {0, 0}, {1, 1});
    CheckConv({{1, c, 30, 1}, {4, c, 3, 3}, 1, {1, 1}, {}, {1, 1, 1, 1}}, {1, 1}, {30, 1});
  }
  // Groups of 1 to 4 input and 4 or 5 output channels each.
  CheckConv({{1, 6, 15, 14}, {12, 2, 3, 3}, 3, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {8, 7});
  CheckConv({{2, 8, 12, 13}, {10, 4, 5, 5}, 2, {1, 1}, {}, {2, 2, 2, 2}}, {2, 2}, {12, 13});
  CheckConv({{1, 3, 10, 10}, {15, 1, 3, 3}, 3, {1, 1}, {}, {1, 1, 1, 1}, false}, {1, 1}, {10, 10});
  // Large enough to open a parallel region (GemmWorkUnits of at least 1; the small ones
  // above run serially): the stem's rows, 3 -> 16, 3x3 stride 2 on 224 columns (rows of
  // 112: 7 AVX-512 vectors, 14 AVX2 vectors); a dilated one with a partial channel block.
  CheckConv({{1, 3, 24, 224}, {16, 3, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {12, 112});
  CheckConv({{2, 3, 40, 57}, {13, 3, 3, 3}, 1, {1, 1}, {2, 2}, {1, 2, 3, 2}}, {1, 2}, {40, 57});
}

// The rule on W's shape (few_channels.h): 2-D, 1 to 4 input channels and at least 4 output
// channels per group, 2 to 49 taps.
TEST(Conv, FewChannelsTakesStemsOnly) {
  EXPECT_TRUE(conv::FewChannelsApplies(2, 16, 3, 9));   // MobileNetV3-small's stem
  EXPECT_TRUE(conv::FewChannelsApplies(2, 32, 3, 9));   // EfficientNet-B0's
  EXPECT_TRUE(conv::FewChannelsApplies(2, 64, 3, 49));  // ResNet's 7x7
  EXPECT_TRUE(conv::FewChannelsApplies(2, 4, 1, 2));
  EXPECT_TRUE(conv::FewChannelsApplies(2, 5, 4, 25));
  EXPECT_FALSE(conv::FewChannelsApplies(2, 16, 5, 9));     // 5 input channels: the GEMM paths
  EXPECT_FALSE(conv::FewChannelsApplies(2, 3, 3, 9));      // 3 output channels
  EXPECT_FALSE(conv::FewChannelsApplies(2, 1, 1, 9));      // depthwise
  EXPECT_FALSE(conv::FewChannelsApplies(2, 768, 3, 256));  // a ViT's 16x16 patches
  EXPECT_FALSE(conv::FewChannelsApplies(2, 16, 3, 1));     // 1x1: X is the GEMM's B
  EXPECT_FALSE(conv::FewChannelsApplies(1, 16, 3, 3));
  EXPECT_FALSE(conv::FewChannelsApplies(3, 16, 3, 27));
}

// The region a convolution opens names its path: the stems open the few-channel strips'
// region (with its threshold forced to 1 work unit), other shapes do not.
TEST(Conv, StemShapesRunTheFewChannelStrips) {
  const auto labels = [](std::vector<int64_t> x_shape, std::vector<int64_t> w_shape, int64_t group) {
    KernelTester t("Conv", 22);
    t.Input(MakeTensor<float>(Shape(x_shape), Random(Product(x_shape), 1)))
        .ConstantInput(MakeTensor<float>(Shape(w_shape), Random(Product(w_shape), 2)))
        .Attr("group", group)
        .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
        .Tuning(param::kMinimumTasks, int64_t{1})
        .Tuning(param::kDepthwiseMinimumMultiplyAdds, int64_t{1});
    auto result = t.RunWithDetails(2);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    std::vector<std::string> names;
    if (result.ok()) {
      for (const RegionEvent& e : result->regions) names.push_back(e.label);
    }
    return names;
  };
  const std::vector<std::string> strips = {"conv.few_channels_strips"};
  EXPECT_EQ(labels({1, 3, 32, 32}, {16, 3, 3, 3}, 1), strips);
  EXPECT_EQ(labels({1, 1, 96, 96}, {8, 1, 3, 3}, 1), strips);  // one input channel, 8 outputs
  EXPECT_EQ(labels({1, 8, 32, 32}, {16, 4, 3, 3}, 2), strips);
  EXPECT_NE(labels({1, 5, 32, 32}, {16, 5, 3, 3}, 1), strips);
  EXPECT_NE(labels({1, 8, 32, 32}, {8, 1, 3, 3}, 8), strips);  // depthwise
}

// Every row kernel against FewChannelsRowFn's contract (few_channels_rows.h): the SIMD
// variants bit for bit against one fused multiply-add per tap in tap order from 0; the
// portable one (multiply, then add, unless the compiler contracts them) within a few ulps
// of a double-precision sum. Rows of 1 to 150 columns (a partial vector, whole tiles and
// the narrower tiles after them), full and partial channel blocks; the columns past the
// row's end and the rows of channels past `channels` (null pointers) are not touched.
class FewChannelsVariantTest : public ::testing::TestWithParam<IsaVariant<conv::FewChannelsKernel>> {};

TEST_P(FewChannelsVariantTest, SumsTapsInOrderIntoEachRow) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const conv::FewChannelsKernel kernel = GetParam().impl;
  const float kUntouched = -12345.0f;
  const std::vector<float> src = Random(8192, 31);
  for (int64_t taps : {1, 9, 27, 147}) {
    std::vector<int64_t> offsets(taps);
    for (int64_t t = 0; t < taps; ++t) offsets[t] = (t * 53) % 4000;
    const std::vector<float> w = Random(taps * kernel.channels, 32);
    for (int64_t width : {1, 3, 7, 8, 15, 16, 17, 40, 48, 49, 112, 150}) {
      for (int channels : {kernel.channels, 1, kernel.channels - 1}) {
        if (channels < 1) continue;
        std::vector<std::vector<float>> y(channels, std::vector<float>(width + 20, kUntouched));
        std::vector<float*> rows(kernel.channels, nullptr);
        for (int m = 0; m < channels; ++m) rows[m] = y[m].data();
        kernel.row(taps, offsets.data(), src.data(), w.data(), channels, rows.data(), width);
        for (int m = 0; m < channels; ++m) {
          for (int64_t j = 0; j < width + 20; ++j) {
            if (j >= width) {
              ASSERT_EQ(y[m][j], kUntouched) << GetParam().name << " taps " << taps << " width " << width
                                             << " channels " << channels << " row " << m << " column " << j;
              continue;
            }
            float fused = 0.0f;
            double exact = 0.0;
            for (int64_t t = 0; t < taps; ++t) {
              fused = __builtin_fmaf(w[t * kernel.channels + m], src[offsets[t] + j], fused);
              exact += double(w[t * kernel.channels + m]) * src[offsets[t] + j];
            }
            const float got = y[m][j];
            if (GetParam().isa == Isa::kPortable ? std::fabs(got - exact) > 1e-5 * (1 + taps) : got != fused) {
              FAIL() << GetParam().name << " taps " << taps << " width " << width << " channels " << channels << " row "
                     << m << " column " << j << ": " << got << ", fused " << fused << ", exact " << exact;
            }
          }
        }
      }
    }
  }
}

TEST_P(FewChannelsVariantTest, StagesPaddedRowsAsColumnPhases) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const conv::FewChannelsStageFn stage = GetParam().impl.stage;
  const std::vector<float> in = Random(300, 33);
  for (int64_t stride : {1, 2, 3}) {
    for (int64_t in_w : {1, 5, 17, 224}) {
      for (int64_t pad : {0, 1, 3, 20}) {
        for (int64_t length : {1, 16, 48, 128}) {
          for (bool padding_row : {false, true}) {
            std::vector<float> out(stride * length + 5, -7.0f);
            stage(padding_row ? nullptr : in.data(), in_w, pad, stride, length, out.data());
            for (int64_t p = 0; p < stride; ++p) {
              for (int64_t i = 0; i < length; ++i) {
                const int64_t column = i * stride + p - pad;
                const float want = !padding_row && column >= 0 && column < in_w ? in[column] : 0.0f;
                ASSERT_EQ(out[p * length + i], want)
                    << GetParam().name << " stride " << stride << " in_w " << in_w << " pad " << pad << " length "
                    << length << " phase " << p << " element " << i << " padding row " << padding_row;
              }
            }
            for (int64_t i = stride * length; i < stride * length + 5; ++i) ASSERT_EQ(out[i], -7.0f);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, FewChannelsVariantTest, ::testing::ValuesIn(conv::FewChannelsVariants()),
                         IsaVariantTestName<conv::FewChannelsKernel>);

TEST(Conv, EmptyBatchGivesAnEmptyOutput) {
  for (bool constant_w : {false, true}) {
    const ConvCase c{{0, 4, 5, 5}, {6, 4, 3, 3}};
    KernelTester t = MakeConvTester(c, {}, Random(6 * 4 * 9, 2), Random(6, 3), constant_w);
    EXPECT_TRUE(testing::SerialMatchesParticipants<float>(t, Shape({0, 6, 3, 3})).empty());
  }
}

TEST(Conv, ConstantWeightsArePackedOnceNotPerRun) {
  // 7x7 output, 256 x 1152 weights: packing them per run needs more scratch than the
  // participants' im2col panels; with constant W a run's allocations are the output and
  // those panels only.
  const ConvCase c{{1, 128, 7, 7}, {256, 128, 3, 3}, 1, {}, {}, {1, 1, 1, 1}};
  const auto x = Random(Product(c.x), 1), w = Random(Product(c.w), 2), b = Random(256, 3);
  int64_t scratch[2];
  for (bool constant_w : {false, true}) {
    KernelTester t = MakeConvTester(c, x, w, b, constant_w);
    auto run = t.RunWithDetails(2);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    scratch[constant_w] = run->peak_scratch;
    EXPECT_LE(run->allocation.peak_bytes, 256 * 49 * 4 + run->peak_scratch);
  }
  const int64_t weight_bytes = 256 * 128 * 9 * 4;
  EXPECT_GE(scratch[false] - scratch[true], weight_bytes);
  EXPECT_LT(scratch[true], weight_bytes / 4);
}

// PackedConvWeights::Pack's rows_read promise (what lets Conv consume W): rows of W it
// reported read are never read again (poisoned with NaN as soon as reported here), every
// row is reported by the end, rows go as they are packed, and the packed bytes are the ones
// packing without the callback gives; weights that are not packed (the few-channel stems)
// report nothing. Both layouts: implicit GEMM (AVX2 and up) and PrepackA's MR-row panels,
// K within and past one K block, channel counts that fill no whole panel, groups.
TEST(Conv, PackedWeightsNeverReadRowsTheyReportedRead) {
  struct PackCase {
    std::vector<int64_t> w;
    int64_t group;
  };
  for (const PackCase& c : {PackCase{{64, 32, 3, 3}, 1}, PackCase{{40, 24, 3, 3}, 1}, PackCase{{70, 16, 1, 1}, 1},
                            PackCase{{37, 900, 1, 1}, 1}, PackCase{{8, 700, 1, 1}, 1}, PackCase{{80, 5, 3, 3}, 2},
                            PackCase{{42, 7, 5, 5}, 2}, PackCase{{6, 3, 1, 1}, 3}, PackCase{{16, 3, 3, 3}, 1}}) {
    SCOPED_TRACE("W " + Shape(c.w).ToString() + " group " + std::to_string(c.group));
    const std::vector<float> values = Random(Product(c.w), 7);
    auto want = conv::PackedConvWeights::Pack(MakeTensor<float>(Shape(c.w), values), c.group);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    Tensor w = MakeTensor<float>(Shape(c.w), values);
    const int64_t m = c.w[0], row = Product(c.w, 1);
    int64_t reported = 0, calls = 0;
    bool monotone = true;
    auto got = conv::PackedConvWeights::Pack(w, c.group, [&](int64_t rows) {
      monotone = monotone && rows >= reported && rows <= m;
      for (int64_t r = reported; r < rows; ++r) {
        std::fill(w.data<float>() + r * row, w.data<float>() + (r + 1) * row, std::numeric_limits<float>::quiet_NaN());
      }
      reported = std::max(reported, rows);
      ++calls;
    });
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->packed(), want->packed());
    if (!want->packed()) {
      EXPECT_EQ(calls, 0);
      continue;
    }
    EXPECT_TRUE(monotone);
    EXPECT_EQ(reported, m);
    // Released as it goes: once per block of channels (an implicit tile's columns, else
    // the GEMM kernel's MR rows) in every group, not at the end only.
    const int64_t mg = m / c.group, cg = c.w[1], taps = Product(c.w, 2);
    const int64_t block = conv::ImplicitGemmApplies(static_cast<int>(c.w.size()) - 2, mg, cg, taps)
                              ? conv::ImplicitTileFor(mg).cols
                              : gemm::BestKernel().mr;
    EXPECT_EQ(calls, c.group * ((mg + block - 1) / block)) << "block " << block;
    ASSERT_EQ(got->bytes(), want->bytes());
    EXPECT_EQ(std::memcmp(got->Find(w), want->Find(w), want->bytes()), 0);
  }
}

TEST(Conv, DepthwiseAndChannelMultiplier) {
  CheckConv({{2, 8, 15, 15}, {8, 1, 3, 3}, 8, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {8, 8});
  CheckConv({{1, 4, 12, 12}, {8, 1, 5, 5}, 4, {1, 1}, {2, 2}, {4, 4, 4, 4}}, {4, 4}, {12, 12});
  CheckConv({{1, 1, 9, 9}, {3, 1, 3, 3}, 1, {}, {}, {}}, {0, 0}, {7, 7});
  // Rows wide enough for the SIMD row kernel (16 columns per vector), strides 1 and 2, dilation.
  CheckConv({{2, 3, 6, 70}, {3, 1, 3, 3}, 3, {1, 1}, {}, {1, 1, 1, 1}}, {1, 1}, {6, 70});
  CheckConv({{1, 2, 9, 75}, {2, 1, 3, 5}, 2, {2, 2}, {1, 2}, {1, 2, 1, 2}}, {1, 2}, {5, 36});
  CheckConv({{1, 2, 4, 50}, {2, 1, 2, 3}, 2, {1, 3}, {}, {0, 1, 0, 1}}, {0, 1}, {3, 17});
  // 3x3 strips of 4 output rows with unmasked interior vectors, strides 1 and 2.
  CheckConv({{1, 3, 13, 57}, {3, 1, 3, 3}, 3, {1, 1}, {}, {1, 1, 1, 1}}, {1, 1}, {13, 57});
  CheckConv({{2, 2, 15, 70}, {2, 1, 3, 3}, 2, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {8, 35});
  // Padded rows: stride 2 (split into even / odd columns) 5x5 with a channel multiplier of
  // 2 and uneven pads, 3x3 on an odd width, 5x5 stride 1 on MobileNetV3's 14x14; a 5x5 row
  // too wide for the padded rows.
  CheckConv({{1, 3, 17, 61}, {6, 1, 5, 5}, 3, {2, 2}, {}, {2, 1, 1, 2}}, {2, 1}, {8, 30});
  CheckConv({{2, 2, 12, 41}, {2, 1, 3, 3}, 2, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {6, 21});
  CheckConv({{1, 3, 14, 14}, {3, 1, 5, 5}, 3, {1, 1}, {}, {2, 2, 2, 2}}, {2, 2}, {14, 14});
  CheckConv({{1, 2, 6, 1030}, {2, 1, 5, 5}, 2, {2, 2}, {}, {2, 2, 2, 2}}, {2, 2}, {3, 515});
}

// Small planes with many channels: the channel-blocked kernels (rows of at most half a
// vector: 7 columns on AVX-512, 4 on AVX2 and AVX-512), full and partial channel blocks, a
// channel multiplier, strides, dilations, asymmetric pads and no bias.
TEST(Conv, DepthwiseChannelBlocks) {
  // MobileNetV3's 5x5 planes ending in 7x7 (stride 1, and stride 2 from 14x14); 19 channels
  // of 4x4 (a partial block everywhere).
  CheckConv({{1, 40, 7, 7}, {40, 1, 5, 5}, 40, {1, 1}, {}, {2, 2, 2, 2}}, {2, 2}, {7, 7});
  CheckConv({{2, 24, 14, 14}, {24, 1, 5, 5}, 24, {2, 2}, {}, {2, 2, 2, 2}}, {2, 2}, {7, 7});
  CheckConv({{1, 19, 4, 4}, {19, 1, 3, 3}, 19, {1, 1}, {}, {1, 1, 1, 1}}, {1, 1}, {4, 4});
  // Wide rows (DepthwiseChannelsTake): 5x5 at 14x14 (40 channels: 2 full blocks of 16 and
  // a partial one) and 28x28, 5x5 stride 2 from 28x28 with uneven pads, 3x3 at 14x14 (the
  // blocks on AVX2, the planes on AVX-512) and 3x3 stride 2 from 27x27.
  CheckConv({{1, 40, 14, 14}, {40, 1, 5, 5}, 40, {1, 1}, {}, {2, 2, 2, 2}}, {2, 2}, {14, 14});
  CheckConv({{1, 17, 28, 28}, {17, 1, 5, 5}, 17, {1, 1}, {}, {2, 2, 2, 2}}, {2, 2}, {28, 28});
  CheckConv({{2, 20, 28, 28}, {20, 1, 5, 5}, 20, {2, 2}, {}, {1, 2, 2, 1}}, {1, 2}, {14, 14});
  CheckConv({{1, 24, 14, 14}, {24, 1, 3, 3}, 24, {1, 1}, {}, {1, 1, 1, 1}}, {1, 1}, {14, 14});
  CheckConv({{1, 33, 27, 27}, {33, 1, 3, 3}, 33, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {14, 14});
  // 3x3, a channel multiplier of 2 (34 outputs from 17 planes), dilation 2, uneven pads.
  CheckConv({{1, 17, 6, 5}, {34, 1, 3, 3}, 17, {1, 1}, {2, 2}, {1, 2, 3, 1}}, {1, 2}, {6, 4});
  // Stride 2 with pads past the end, no bias, a kernel wider than the input.
  ConvCase no_bias{{2, 33, 9, 4}, {33, 1, 3, 7}, 33, {2, 1}, {}, {0, 3, 2, 3}};
  no_bias.bias = false;
  CheckConv(no_bias, {0, 3}, {5, 4});
}

// The portable thresholds decide where a region opens (2 participants, schema defaults):
// at kConvDepthwiseMinimumMultiplyAdds multiply-adds a depthwise convolution splits, one
// plane less runs serially, on the plane kernels (64x64 planes, 1x1 kernel) and on the
// channel blocks (7x7 planes, 5x5 kernel); at kConvMinimumTasks work units a 1x1 (GEMM)
// convolution splits, below it runs serially.
TEST(Conv, PortableThresholdsDecideTheRegions) {
  const auto regions = [](std::vector<int64_t> x_shape, std::vector<int64_t> w_shape, int64_t group, int64_t pad) {
    KernelTester t("Conv", 22);
    t.Input(MakeTensor<float>(Shape(x_shape), Random(Product(x_shape), 1)))
        .ConstantInput(MakeTensor<float>(Shape(w_shape), Random(Product(w_shape), 2)))
        .Attr("group", group)
        .Attr("pads", std::vector<int64_t>{pad, pad, pad, pad})
        .PortableDefaults();
    auto result = t.RunWithDetails(2);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? result->regions.size() : size_t{99};
  };
  // Plane kernels: 64 planes x 4096 outputs x 1 tap = 2^18 multiply-adds.
  ASSERT_EQ(conv::kConvDepthwiseMinimumMultiplyAdds, int64_t{1} << 18) << "update the shapes below";
  EXPECT_EQ(regions({1, 64, 64, 64}, {64, 1, 1, 1}, 64, 0), 1u);
  EXPECT_EQ(regions({1, 63, 64, 64}, {63, 1, 1, 1}, 63, 0), 0u);
  // Channel blocks: 1225 multiply-adds per 7x7 plane with a 5x5 kernel; 214 planes reach 2^18.
  EXPECT_EQ(regions({1, 214, 7, 7}, {214, 1, 5, 5}, 214, 2), 1u);
  EXPECT_EQ(regions({1, 213, 7, 7}, {213, 1, 5, 5}, 213, 2), 0u);
  // 1x1: 64 channels x 64 positions x K; K = 64 x kConvMinimumTasks gives exactly that many units.
  const int64_t k = 64 * conv::kConvMinimumTasks;
  EXPECT_EQ(regions({1, k, 8, 8}, {64, k, 1, 1}, 1, 0), 1u);
  EXPECT_EQ(regions({1, k - 16, 8, 8}, {64, k - 16, 1, 1}, 1, 0), 0u);
}

// The schema's portable defaults are the constants of conv_float.h (Conv's own
// minimum_tasks, not the Gemm op's).
TEST(Conv, SchemaDefaultsAreTheConvConstants) {
  int found = 0;
  for (const ParamSpec& spec : conv::ConvTuningParams()) {
    if (spec.name == param::kMinimumTasks) {
      EXPECT_EQ(std::get<int64_t>(spec.portable_default), conv::kConvMinimumTasks);
      ++found;
    }
    if (spec.name == param::kDepthwiseMinimumMultiplyAdds) {
      EXPECT_EQ(std::get<int64_t>(spec.portable_default), conv::kConvDepthwiseMinimumMultiplyAdds);
      ++found;
    }
    if (spec.name == conv::kImplicitChunkPanelBytesParam) {
      EXPECT_EQ(std::get<int64_t>(spec.portable_default), conv::kConvImplicitChunkPanelBytes);
      ++found;
    }
    if (spec.name == conv::kImplicitChunkTilesParam) {
      EXPECT_EQ(std::get<int64_t>(spec.portable_default), conv::kConvImplicitChunkTiles);
      ++found;
    }
  }
  EXPECT_EQ(found, 4);
}

// The rule: rows of at most half the variant's vector, at least a vector's worth of output
// channels, 2-D (or 1-D) only.
// DepthwiseChannelsTake's rule (depthwise.h) on variants of 16 and 8 lanes with the x86
// variants' square_max_cols: rows of at most half a vector always; square 3x3 / 5x5
// kernels with rows up to the variant's columns for their kernel and stride; never fewer
// channels than lanes, 3-D, or dilated or non-square kernels past half a vector.
TEST(Conv, DepthwiseChannelBlocksTakeNarrowRowsWithManyChannels) {
  const auto geometry = [](std::vector<int64_t> in, std::vector<int64_t> kernel, int64_t stride = 1,
                           int64_t dilation = 1) {
    conv::ConvGeometry cg;
    cg.rank = static_cast<int>(in.size());
    for (size_t a = 0; a < in.size(); ++a) {
      cg.in_spatial.push_back(in[a]);
      cg.kernel.push_back(kernel[a]);
      cg.strides.push_back(stride);
      cg.dilations.push_back(dilation);
      cg.pads_begin.push_back(kernel[a] / 2 * dilation);
      cg.pads_end.push_back(kernel[a] / 2 * dilation);
      cg.out_spatial.push_back((in[a] - 1) / stride + 1);
    }
    return conv::Geometry3d(cg);
  };
  const conv::DepthwiseChannels wide16{16, nullptr, {{8, 16}, {32, 32}}}, wide8{8, nullptr, {{16, 16}, {16, 16}}};
  const conv::DepthwiseChannels narrow16{16, nullptr}, narrow8{8, nullptr};  // no wide rows
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({7, 7}, {5, 5}), 576, narrow16));
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({8, 8}, {5, 5}), 16, narrow16));
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({9, 9}, {5, 5}), 240, narrow16));  // 9 of 16 lanes
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({14, 14}, {5, 5}), 240, narrow16));
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({7, 7}, {5, 5}), 576, narrow8));  // 7 of 8 lanes
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({4, 4}, {3, 3}), 8, narrow8));
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({4, 4}, {3, 3}), 7, narrow8));      // fewer channels than lanes
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({28, 28}, {3, 3}), 88, narrow16));  // rows fill the vectors
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({5}, {3}), 32, narrow16));           // 1-D: one row
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({3, 7, 7}, {3, 3, 3}), 64, narrow16));
  // Wide rows, 16 lanes: 5x5 up to 32 columns at strides 1 and 2, 3x3 up to 16 at stride 2.
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({14, 14}, {5, 5}), 240, wide16));
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({28, 28}, {5, 5}), 240, wide16));
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({32, 32}, {5, 5}), 16, wide16));
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({33, 33}, {5, 5}), 240, wide16));  // 33 > 2 x 16
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({56, 56}, {5, 5}, 2), 144, wide16));
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({28, 28}, {3, 3}, 2), 240, wide16));
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({32, 32}, {3, 3}, 2), 240, wide16));
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({56, 56}, {3, 3}, 2), 144, wide16));  // 28 > 16
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({14, 14}, {3, 3}), 576, wide16));     // 14 > 8 at stride 1
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({14, 14}, {5, 5}), 15, wide16));      // fewer channels than lanes
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({14, 14}, {5, 5}, 1, 2), 240, wide16));  // dilated
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({14, 14}, {7, 7}), 240, wide16));        // 7x7: general loop
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({14, 14}, {3, 5}), 240, wide16));        // not square
  // Wide rows, 8 lanes: 3x3 and 5x5 up to 16 columns at strides 1 and 2.
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({14, 14}, {3, 3}), 576, wide8));
  EXPECT_TRUE(conv::DepthwiseChannelsTake(geometry({28, 28}, {5, 5}, 2), 96, wide8));
  EXPECT_FALSE(conv::DepthwiseChannelsTake(geometry({28, 28}, {5, 5}), 96, wide8));  // 28 > 2 x 8
}

// Every channel-blocked variant sums like the SIMD planes: per output, from 0 one fused
// multiply-add per tap inside the input in (kh, kw) order, then + bias; checked bit for
// bit against that order evaluated in scalars, for full and partial blocks, a channel
// multiplier (lanes reading one plane), strides, dilations, pads on every side, kernels
// wider than the plane and no bias. The scratch it is given is exactly
// DepthwiseChannelsScratch floats, followed by guard values that must survive.
// The separate activation's arithmetic on one value (gemm/epilogue.h's ApplyRun): Relu,
// Clip and HardSwish in scalars, Sigmoid and Swish through `spans`' Sigmoid (the epilogue's
// span of the lanes under test).
float ActivateLikeTheEpilogue(const conv::PlaneActivation& a, float v, const gemm::EpilogueSpans& spans) {
  const auto sigmoid = [&](float s) {
    spans.sigmoid(&s, 1);
    return s;
  };
  const auto unit = [](float t) { return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t; };
  switch (a.kind) {
    case conv::PlaneActivationKind::kRelu:
      return v > 0.0f ? v : 0.0f;
    case conv::PlaneActivationKind::kClip:
      return std::min(std::max(v, a.alpha), a.beta);
    case conv::PlaneActivationKind::kSigmoid:
      return sigmoid(v);
    case conv::PlaneActivationKind::kHardSwish:
      return v * unit(v / 6.0f + 0.5f);
    case conv::PlaneActivationKind::kSwish:
      return v * sigmoid(a.alpha * v);
    case conv::PlaneActivationKind::kNone:
      break;
  }
  return v;
}

// The epilogue's span variant of a depthwise variant's ISA (same name), else its widest
// enabled one (what the portable plane calls).
const gemm::EpilogueSpans& SpansOf(const char* name, Isa isa) {
  const std::vector<IsaVariant<gemm::EpilogueSpans>>& spans = gemm::EpilogueSpanVariants();
  for (const IsaVariant<gemm::EpilogueSpans>& v : spans) {
    if (isa != Isa::kPortable && std::string(v.name) == name) return v.impl;
  }
  return BestVariant(spans).impl;
}

const conv::PlaneActivation kPlaneActivations[] = {
    {conv::PlaneActivationKind::kRelu, 0, 0},     {conv::PlaneActivationKind::kClip, -0.5f, 0.75f},
    {conv::PlaneActivationKind::kSigmoid, 0, 0},  {conv::PlaneActivationKind::kHardSwish, 0, 0},
    {conv::PlaneActivationKind::kSwish, 0.7f, 0}, {conv::PlaneActivationKind::kSwish, 1.0f, 0}};

class DepthwiseChannelsVariantTest : public ::testing::TestWithParam<IsaVariant<conv::DepthwiseChannels>> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DepthwiseChannelsVariantTest);

TEST_P(DepthwiseChannelsVariantTest, SumsTapsInKhKwOrderThenBias) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const conv::DepthwiseChannels variant = GetParam().impl;
  struct PlaneCase {
    int64_t in_h, in_w, kernel_h, kernel_w, stride_h, stride_w, dilation, pad_top, pad_left, pad_bottom, pad_right;
  };
  const PlaneCase cases[] = {{7, 7, 5, 5, 1, 1, 1, 2, 2, 2, 2},
                             {14, 14, 5, 5, 2, 2, 1, 2, 2, 2, 2},
                             {14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                             {14, 14, 3, 3, 2, 2, 1, 0, 0, 1, 1},
                             {5, 6, 3, 3, 1, 1, 2, 2, 1, 2, 3},
                             {3, 3, 5, 5, 1, 1, 1, 2, 2, 2, 2},
                             {1, 9, 1, 3, 1, 1, 1, 0, 1, 0, 1},
                             {8, 4, 3, 7, 2, 1, 1, 0, 3, 2, 3},
                             {6, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                             {9, 11, 2, 4, 3, 2, 1, 1, 0, 0, 2},
                             // Input rows and columns past the taps' reach (not in the window).
                             {10, 10, 3, 3, 2, 2, 1, 0, 0, 0, 0},
                             // Square 3x3 / 5x5 rows of every run length: 5, 2, 4, 1, 8 + 8 + 1.
                             {6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                             {4, 4, 5, 5, 2, 2, 1, 2, 2, 2, 2},
                             {9, 9, 3, 3, 2, 2, 1, 0, 0, 0, 0},
                             {1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                             {12, 17, 5, 5, 1, 1, 1, 2, 2, 2, 2},
                             // Rows of up to two vectors (runs 8 + 8 + 8 + 4 / 6).
                             {9, 56, 5, 5, 2, 2, 1, 2, 2, 2, 2},
                             {6, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1}};
  const int lanes = variant.lanes;
  for (const PlaneCase& c : cases) {
    conv::ConvGeometry cg;
    cg.rank = 2;
    cg.in_spatial = {c.in_h, c.in_w};
    cg.kernel = {c.kernel_h, c.kernel_w};
    cg.strides = {c.stride_h, c.stride_w};
    cg.dilations = {c.dilation, c.dilation};
    cg.pads_begin = {c.pad_top, c.pad_left};
    cg.pads_end = {c.pad_bottom, c.pad_right};
    cg.out_spatial = {(c.in_h + c.pad_top + c.pad_bottom - c.dilation * (c.kernel_h - 1) - 1) / c.stride_h + 1,
                      (c.in_w + c.pad_left + c.pad_right - c.dilation * (c.kernel_w - 1) - 1) / c.stride_w + 1};
    const conv::Geometry3d g(cg);
    for (const int channels : {lanes, lanes - 3, 1}) {
      for (const bool with_bias : {true, false}) {
        // Lane c reads plane c / 2 (a channel multiplier of 2).
        const auto x = Random((channels + 1) / 2 * g.in_size, 21), w = Random(channels * g.kernel_size, 22);
        const auto b = Random(channels, 23);
        std::vector<const float*> planes(channels);
        for (int ch = 0; ch < channels; ++ch) planes[ch] = x.data() + ch / 2 * g.in_size;
        const int64_t scratch_floats = conv::DepthwiseChannelsScratch(g, lanes);
        constexpr int kGuard = 64;
        std::vector<float> scratch(scratch_floats + kGuard, 12345.0f);
        std::vector<float> got(channels * g.out_size, -99.0f);
        variant.fn(g, planes.data(), w.data(), with_bias ? b.data() : nullptr, channels, conv::PlaneActivation{},
                   got.data(), scratch.data());
        for (int i = 0; i < kGuard; ++i) ASSERT_EQ(scratch[scratch_floats + i], 12345.0f) << "scratch overrun";
        for (int ch = 0; ch < channels; ++ch) {
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            for (int64_t ow = 0; ow < g.out[2]; ++ow) {
              float acc = 0.0f;
              for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
                for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
                  const int64_t ih = oh * c.stride_h - c.pad_top + kh * c.dilation;
                  const int64_t iw = ow * c.stride_w - c.pad_left + kw * c.dilation;
                  if (ih < 0 || ih >= c.in_h || iw < 0 || iw >= c.in_w) continue;
                  acc = __builtin_fmaf(w[ch * g.kernel_size + kh * c.kernel_w + kw], planes[ch][ih * c.in_w + iw], acc);
                }
              }
              const float want = acc + (with_bias ? b[ch] : 0.0f);
              ASSERT_EQ(got[ch * g.out_size + oh * g.out[2] + ow], want)
                  << GetParam().name << " plane " << c.in_h << "x" << c.in_w << " kernel " << c.kernel_h << "x"
                  << c.kernel_w << " channels " << channels << " channel " << ch << " at " << oh << "," << ow;
            }
          }
        }
      }
    }
  }
}

// The activation a channel block applies gives the bits of the block without it followed
// by the separate activation's arithmetic on the same lanes; full and partial blocks,
// stride 1 and 2, 3x3 and 5x5, inputs scaled to reach the activations' bounds.
TEST_P(DepthwiseChannelsVariantTest, ActivationEqualsTheBlockThenTheActivation) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const conv::DepthwiseChannels variant = GetParam().impl;
  const gemm::EpilogueSpans& spans = SpansOf(GetParam().name, GetParam().isa);
  struct PlaneCase {
    int64_t in_hw, kernel, stride;
  };
  for (const PlaneCase& c : {PlaneCase{7, 5, 1}, PlaneCase{8, 3, 2}, PlaneCase{4, 3, 1}}) {
    conv::ConvGeometry cg;
    cg.rank = 2;
    cg.in_spatial = {c.in_hw, c.in_hw};
    cg.kernel = {c.kernel, c.kernel};
    cg.strides = {c.stride, c.stride};
    cg.dilations = {1, 1};
    cg.pads_begin = {c.kernel / 2, c.kernel / 2};
    cg.pads_end = {c.kernel / 2, c.kernel / 2};
    const int64_t out = (c.in_hw + 2 * (c.kernel / 2) - c.kernel) / c.stride + 1;
    cg.out_spatial = {out, out};
    const conv::Geometry3d g(cg);
    for (const int channels : {variant.lanes, variant.lanes - 3}) {
      std::vector<float> x = Random(channels * g.in_size, 31);
      for (float& v : x) v *= 4.0f;
      const auto w = Random(channels * g.kernel_size, 32), b = Random(channels, 33);
      std::vector<const float*> planes(channels);
      for (int ch = 0; ch < channels; ++ch) planes[ch] = x.data() + ch * g.in_size;
      std::vector<float> scratch(conv::DepthwiseChannelsScratch(g, variant.lanes));
      std::vector<float> plain(channels * g.out_size);
      variant.fn(g, planes.data(), w.data(), b.data(), channels, conv::PlaneActivation{}, plain.data(), scratch.data());
      for (const conv::PlaneActivation& a : kPlaneActivations) {
        std::vector<float> got(channels * g.out_size, -99.0f);
        variant.fn(g, planes.data(), w.data(), b.data(), channels, a, got.data(), scratch.data());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i], ActivateLikeTheEpilogue(a, plain[i], spans))
              << GetParam().name << " activation " << static_cast<int>(a.kind) << " plane " << c.in_hw << " kernel "
              << c.kernel << " stride " << c.stride << " channels " << channels << " at " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, DepthwiseChannelsVariantTest, ::testing::ValuesIn(conv::DepthwiseChannelsVariants()),
                         IsaVariantTestName<conv::DepthwiseChannels>);

// Every depthwise plane variant against the portable one, on row widths around the
// vector lengths, strides 1 and 2, dilations, pads wider than the kernel; variants this CPU
// cannot run, or the ISA cap excludes, are skipped by name.
class DepthwisePlaneVariantTest : public ::testing::TestWithParam<IsaVariant<conv::DepthwiseSelectFn>> {};

TEST_P(DepthwisePlaneVariantTest, MatchesThePortablePlane) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  struct PlaneCase {
    int64_t in_h, in_w, kernel_h, kernel_w, stride, dilation, pad_begin, pad_end;
    int64_t dilation_w = 0;  // the column dilation where it differs from the row's
  };
  const PlaneCase cases[] = {{14, 14, 3, 3, 1, 1, 1, 1},
                             {28, 28, 3, 3, 2, 1, 1, 1},
                             {5, 7, 3, 3, 1, 1, 1, 1},
                             {9, 17, 3, 5, 1, 2, 4, 3},
                             {6, 33, 1, 1, 2, 1, 0, 0},
                             {7, 40, 5, 16, 2, 1, 9, 9},
                             {3, 1, 3, 3, 1, 1, 1, 1},
                             {11, 65, 3, 3, 2, 3, 5, 2},
                             {4, 31, 2, 7, 1, 1, 0, 6},
                             {8, 20, 3, 3, 1, 1, 2, 0},
                             {9, 23, 3, 3, 2, 1, 0, 3},
                             {2, 40, 3, 3, 1, 1, 3, 3},
                             // 3x3 row strips: interior vectors (unmasked) between the edges,
                             // heights not a multiple of the strip, no pad, pad past the end.
                             {13, 56, 3, 3, 1, 1, 1, 1},
                             {14, 112, 3, 3, 2, 1, 1, 1},
                             {10, 64, 3, 3, 1, 1, 0, 0},
                             {9, 67, 3, 3, 2, 1, 0, 1},
                             {6, 97, 3, 3, 1, 1, 0, 2},
                             {11, 130, 3, 3, 2, 1, 2, 0},
                             // 5x5 row strips, stride 1 and 2: MobileNetV3 / EfficientNet
                             // planes (14x14 s1, 56x56 s2, pad 2), no pad, pads past the
                             // end, widths below / at / between whole vectors, heights not a
                             // multiple of the strip, a column dilation, planes smaller than
                             // the kernel.
                             {14, 14, 5, 5, 1, 1, 2, 2},
                             {56, 56, 5, 5, 2, 1, 2, 2},
                             {7, 7, 5, 5, 1, 1, 2, 2},
                             {28, 28, 5, 5, 2, 1, 2, 2},
                             {13, 67, 5, 5, 1, 1, 0, 0},
                             {15, 97, 5, 5, 2, 1, 0, 0},
                             {9, 40, 5, 5, 1, 1, 0, 3},
                             {10, 51, 5, 5, 2, 1, 3, 1},
                             {6, 130, 5, 5, 1, 1, 4, 4},
                             {3, 3, 5, 5, 1, 1, 2, 2},
                             {4, 5, 5, 5, 2, 1, 2, 2},
                             {18, 33, 5, 5, 1, 1, 1, 0},
                             {21, 129, 5, 5, 2, 1, 1, 2},
                             // Padded rows (stride 2 split into even / odd columns, 5x5
                             // stride 1 whole): outputs a whole
                             // number of vectors (32, 16, 8) and one past, pads wider than
                             // the kernel, a single output column, EfficientNet's 3x3/2 at
                             // 112 and MobileNetV3's 5x5/2 at 28.
                             {9, 64, 5, 5, 2, 1, 2, 2},
                             {9, 62, 5, 5, 2, 1, 2, 2},
                             {7, 33, 3, 3, 2, 1, 1, 1},
                             {8, 17, 3, 3, 2, 1, 1, 0},
                             {6, 30, 5, 5, 2, 1, 9, 9},
                             {5, 5, 5, 5, 2, 1, 0, 0},
                             {9, 112, 3, 3, 2, 1, 1, 1},
                             {28, 28, 5, 5, 2, 1, 2, 2},
                             // Rows too wide for the padded rows' stack ring, and column
                             // dilations: the strips with masked edge vectors.
                             {6, 1100, 5, 5, 2, 1, 2, 2},
                             {5, 801, 3, 3, 2, 1, 1, 1},
                             {7, 1600, 5, 5, 1, 1, 2, 2},
                             {9, 40, 3, 3, 2, 1, 2, 2, 2},
                             {10, 45, 5, 5, 2, 1, 4, 4, 2},
                             {9, 40, 5, 5, 1, 1, 2, 2, 2}};
  int checked = 0;
  for (const PlaneCase& c : cases) {
    conv::ConvGeometry cg;
    cg.rank = 2;
    cg.in_spatial = {c.in_h, c.in_w};
    cg.kernel = {c.kernel_h, c.kernel_w};
    cg.strides = {c.stride, c.stride};
    cg.dilations = {c.dilation, c.dilation_w > 0 ? c.dilation_w : c.dilation};
    cg.pads_begin = {c.pad_begin, c.pad_begin};
    cg.pads_end = {c.pad_end, c.pad_end};
    for (int a = 0; a < 2; ++a) {
      cg.out_spatial.push_back(
          (cg.in_spatial[a] + c.pad_begin + c.pad_end - cg.dilations[a] * (cg.kernel[a] - 1) - 1) / c.stride + 1);
    }
    const conv::Geometry3d g(cg);
    const auto x = Random(g.in_size, 7), w = Random(g.kernel_size, 8);
    std::vector<float> want(g.out_size), got(g.out_size);
    conv::DepthwisePlanePortable(g, x.data(), w.data(), 0.25f, conv::PlaneActivation{}, want.data());
    const conv::DepthwisePlaneFn fn = GetParam().impl(g);
    if (fn == nullptr) continue;
    ++checked;
    std::fill(got.begin(), got.end(), -99.0f);
    fn(g, x.data(), w.data(), 0.25f, conv::PlaneActivation{}, got.data());
    // On x86-64 the portable variant's strips do the scalar loop's arithmetic in its order
    // (products and sums rounded apart: no FMA in the baseline; the padding adds nothing):
    // the same bits. On aarch64 the compiler fuses some of either's products into their sums
    // and not always the same ones: there the tolerance.
#if defined(__x86_64__)
    const bool exact = GetParam().isa == Isa::kPortable;
#else
    const bool exact = false;
#endif
    for (int64_t i = 0; i < g.out_size; ++i) {
      if (exact) {
        ASSERT_EQ(got[i], want[i]) << GetParam().name << " plane " << c.in_h << "x" << c.in_w << " kernel "
                                   << c.kernel_h << "x" << c.kernel_w << " stride " << c.stride << " at " << i;
      }
      ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << GetParam().name << " at " << i;
    }
  }
  EXPECT_GT(checked, 0) << GetParam().name << " took none of the 2-D stride 1 and 2 planes";
}

// The SIMD planes (general loop and the 3x3 / 5x5 row strips) sum like one fused
// multiply-add per tap: per output, from 0 the taps inside the input in (kh, kw) order,
// then + bias; checked bit for bit against that order evaluated in scalars, so switching a
// shape between the general loop and the strips changes no output.
TEST_P(DepthwisePlaneVariantTest, SimdPlanesSumTapsInKhKwOrderThenBias) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  if (GetParam().isa == Isa::kPortable) GTEST_SKIP() << "the portable loop does not promise fused multiply-adds";
  struct PlaneCase {
    int64_t in_h, in_w, kernel, stride, pad_begin, pad_end;
  };
  const PlaneCase cases[] = {{14, 14, 5, 1, 2, 2},
                             {56, 56, 5, 2, 2, 2},
                             {13, 67, 5, 1, 0, 0},
                             {15, 97, 5, 2, 0, 0},
                             {9, 40, 5, 1, 0, 3},
                             {10, 51, 5, 2, 3, 1},
                             {3, 3, 5, 1, 2, 2},
                             {4, 5, 5, 2, 2, 2},
                             {21, 129, 5, 2, 1, 2},
                             {13, 56, 3, 1, 1, 1},
                             {14, 112, 3, 2, 1, 1},
                             {9, 67, 3, 2, 0, 1},
                             {11, 30, 7, 1, 3, 3},
                             {12, 45, 7, 2, 3, 3},
                             // Padded rows (whole vectors of outputs and one past, pads wider
                             // than the kernel) and rows too wide for them.
                             {9, 64, 5, 2, 2, 2},
                             {9, 62, 5, 2, 2, 2},
                             {7, 33, 3, 2, 1, 1},
                             {6, 30, 5, 2, 9, 9},
                             {9, 112, 3, 2, 1, 1},
                             {5, 5, 5, 2, 0, 0},
                             {6, 1100, 5, 2, 2, 2},
                             {5, 801, 3, 2, 1, 1},
                             {8, 32, 5, 1, 2, 2},
                             {7, 17, 5, 1, 7, 7},
                             {7, 1600, 5, 1, 2, 2}};
  for (const PlaneCase& c : cases) {
    conv::ConvGeometry cg;
    cg.rank = 2;
    cg.in_spatial = {c.in_h, c.in_w};
    cg.kernel = {c.kernel, c.kernel};
    cg.strides = {c.stride, c.stride};
    cg.dilations = {1, 1};
    cg.pads_begin = {c.pad_begin, c.pad_begin};
    cg.pads_end = {c.pad_end, c.pad_end};
    for (int a = 0; a < 2; ++a) {
      cg.out_spatial.push_back((cg.in_spatial[a] + c.pad_begin + c.pad_end - cg.kernel[a]) / c.stride + 1);
    }
    const conv::Geometry3d g(cg);
    const conv::DepthwisePlaneFn fn = GetParam().impl(g);
    ASSERT_NE(fn, nullptr) << GetParam().name << " takes every 2-D stride 1 and 2 plane";
    const auto x = Random(g.in_size, 17), w = Random(g.kernel_size, 18);
    const float bias = 0.375f;
    std::vector<float> got(g.out_size, -99.0f);
    fn(g, x.data(), w.data(), bias, conv::PlaneActivation{}, got.data());
    const int64_t out_h = cg.out_spatial[0], out_w = cg.out_spatial[1];
    for (int64_t oh = 0; oh < out_h; ++oh) {
      for (int64_t ow = 0; ow < out_w; ++ow) {
        float acc = 0.0f;
        for (int64_t kh = 0; kh < c.kernel; ++kh) {
          for (int64_t kw = 0; kw < c.kernel; ++kw) {
            const int64_t ih = oh * c.stride - c.pad_begin + kh, iw = ow * c.stride - c.pad_begin + kw;
            if (ih < 0 || ih >= c.in_h || iw < 0 || iw >= c.in_w) continue;
            acc = __builtin_fmaf(w[kh * c.kernel + kw], x[ih * c.in_w + iw], acc);
          }
        }
        ASSERT_EQ(got[oh * out_w + ow], acc + bias)
            << GetParam().name << " plane " << c.in_h << "x" << c.in_w << " kernel " << c.kernel << " stride "
            << c.stride << " at " << oh << "," << ow;
      }
    }
  }
}

// The activation a plane applies itself gives the bits of the plane without it followed
// by the separate activation's arithmetic (ActivateLikeTheEpilogue; the portable plane
// against the epilogue's widest enabled span, which it calls). Planes with interior and
// edge vectors, both strides, 3x3, 5x5 and the general loop; inputs scaled to reach Clip's
// bounds, HardSwish's knees and Sigmoid's saturation.
TEST_P(DepthwisePlaneVariantTest, ActivationEqualsThePlaneThenTheActivation) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const gemm::EpilogueSpans& spans = SpansOf(GetParam().name, GetParam().isa);
  struct PlaneCase {
    int64_t in_h, in_w, kernel, stride, pad;
  };
  const PlaneCase planes[] = {{9, 70, 3, 1, 1},  {10, 75, 3, 2, 1}, {14, 14, 5, 1, 2},
                              {13, 61, 5, 2, 2}, {7, 40, 7, 1, 3},  {6, 33, 7, 2, 3}};
  int checked = 0;
  for (const PlaneCase& c : planes) {
    conv::ConvGeometry cg;
    cg.rank = 2;
    cg.in_spatial = {c.in_h, c.in_w};
    cg.kernel = {c.kernel, c.kernel};
    cg.strides = {c.stride, c.stride};
    cg.dilations = {1, 1};
    cg.pads_begin = {c.pad, c.pad};
    cg.pads_end = {c.pad, c.pad};
    for (int a = 0; a < 2; ++a) {
      cg.out_spatial.push_back((cg.in_spatial[a] + 2 * c.pad - cg.kernel[a]) / c.stride + 1);
    }
    const conv::Geometry3d g(cg);
    const conv::DepthwisePlaneFn fn = GetParam().impl(g);
    if (fn == nullptr) continue;
    std::vector<float> x = Random(g.in_size, 27);
    for (float& v : x) v *= 4.0f;
    const auto w = Random(g.kernel_size, 28);
    std::vector<float> plain(g.out_size);
    fn(g, x.data(), w.data(), 0.125f, conv::PlaneActivation{}, plain.data());
    for (const conv::PlaneActivation& a : kPlaneActivations) {
      ++checked;
      std::vector<float> got(g.out_size, -99.0f);
      fn(g, x.data(), w.data(), 0.125f, a, got.data());
      for (int64_t i = 0; i < g.out_size; ++i) {
        ASSERT_EQ(got[i], ActivateLikeTheEpilogue(a, plain[i], spans))
            << GetParam().name << " activation " << static_cast<int>(a.kind) << " plane " << c.in_h << "x" << c.in_w
            << " kernel " << c.kernel << " stride " << c.stride << " at " << i;
      }
    }
  }
  EXPECT_GT(checked, 0) << GetParam().name << " took none of the planes";
}

INSTANTIATE_TEST_SUITE_P(Isa, DepthwisePlaneVariantTest, ::testing::ValuesIn(conv::DepthwisePlaneVariants()),
                         IsaVariantTestName<conv::DepthwiseSelectFn>);

TEST(Conv, OneAndThreeDimensional) {
  CheckConv({{2, 6, 30}, {5, 6, 4}, 1, {3}, {2}, {1, 2}}, {1}, {9});
  CheckConv({{1, 3, 6, 7, 8}, {4, 3, 3, 2, 3}, 1, {1, 2, 1}, {}, {1, 0, 1, 1, 1, 0}}, {1, 0, 1}, {6, 4, 7});
  CheckConv({{1, 4, 5, 5, 5}, {4, 1, 3, 3, 3}, 4, {}, {}, {1, 1, 1, 1, 1, 1}}, {1, 1, 1}, {5, 5, 5});
}

TEST(Conv, AutoPad) {
  // in 10, kernel 4, stride 3: out 4, total pad (4-1)*3 + 4 - 10 = 3: upper 1|2, lower 2|1.
  CheckConv({{1, 2, 10, 10}, {3, 2, 4, 4}, 1, {3, 3}, {}, {}, true, "SAME_UPPER"}, {1, 1}, {4, 4});
  CheckConv({{1, 2, 10, 10}, {3, 2, 4, 4}, 1, {3, 3}, {}, {}, true, "SAME_LOWER"}, {2, 2}, {4, 4});
  CheckConv({{1, 2, 10, 10}, {3, 2, 4, 4}, 1, {3, 3}, {}, {}, true, "VALID"}, {0, 0}, {3, 3});
}

// Runs a 3x3 pad-1 Conv of 16 input channels on a side x side image with 8 participants;
// returns the run's details (peak scratch, allocations).
KernelRunResult RunSquareConv(KernelTester& t, int64_t side, int64_t out_channels) {
  t.Input(MakeTensor<float>({1, 16, side, side}, Random(16 * side * side, 1)))
      .Input(MakeTensor<float>({out_channels, 16, 3, 3}, Random(out_channels * 16 * 9, 2)))
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Tuning(param::kMinimumTasks, int64_t{1});
  auto run = t.RunWithDetails(8);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  if (!run.ok()) return {};
  // Everything the run allocated beyond its output is scratch.
  EXPECT_LE(run->allocation.peak_bytes, out_channels * side * side * 4 + run->peak_scratch);
  return std::move(run).value();
}

// im2col + GEMM: per-participant packing scratch is bounded by the GEMM blocking, not by
// the image: quadrupling the image area must not double the peak scratch of an
// 8-participant run. (Equal on x86-64, where 96x96 already fills every block; NEON's
// larger blocks are not yet full at 96x96.)
void ExpectScratchBoundedByBlocking(int64_t out_channels) {
  int64_t peaks[2];
  for (int i = 0; i < 2; ++i) {
    KernelTester t("Conv", 11);
    peaks[i] = RunSquareConv(t, 96 << i, out_channels).peak_scratch;
  }
  EXPECT_GT(peaks[0], 0);
  EXPECT_LT(peaks[1], 2 * peaks[0]);
}

TEST(Conv, ScratchDoesNotGrowWithTheImage) {
  ExpectScratchBoundedByBlocking(8);  // 8 output channels: always im2col + GEMM
}

TEST(Conv, ImplicitGemmScratchIsThePaddedInput) {
  // 32 output channels: the implicit GEMM's scratch is at most a zero-padded copy of the
  // input plus the packed weights and the tap offsets, never an im2col matrix (9x the
  // input here). (im2col + GEMM, elsewhere: ScratchDoesNotGrowWithTheImage.)
  if (!conv::ImplicitGemmApplies(2, 32, 16, 9)) {
    // No implicit GEMM on this CPU: these shapes take im2col + GEMM.
    ExpectScratchBoundedByBlocking(32);
    return;
  }
  for (const int64_t side : {96, 192}) {
    KernelTester t("Conv", 11);
    const int64_t peak = RunSquareConv(t, side, 32).peak_scratch;
    const int64_t padded_input = 16 * (side + 2) * (side + 2) * 4, weights = 32 * 144 * 4, offsets = 144 * 8;
    EXPECT_GT(peak, 0);
    EXPECT_LE(peak, padded_input + weights + offsets + 3 * 64);
    EXPECT_LT(peak, 144 * side * side * 4 / 4);
  }
  // Images are padded one at a time: four images need one image's padded copy.
  KernelTester batch("Conv", 11);
  batch.Input(MakeTensor<float>({4, 16, 40, 40}, Random(4 * 16 * 40 * 40, 1)))
      .Input(MakeTensor<float>({32, 16, 3, 3}, Random(32 * 16 * 9, 2)))
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Tuning(param::kMinimumTasks, int64_t{1});
  auto run = batch.RunWithDetails(2);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_LE(run->peak_scratch, 16 * 42 * 42 * 4 + 32 * 144 * 4 + 144 * 8 + 3 * 64);
}

TEST(Conv, BadInputsAreInvalidArgument) {
  KernelTester channels("Conv", 11);
  channels.Input(MakeTensor<float>({1, 3, 4, 4}, std::vector<float>(48)))
      .Input(MakeTensor<float>({2, 2, 3, 3}, std::vector<float>(36)));
  EXPECT_EQ(channels.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester rank("Conv", 11);
  rank.Input(MakeTensor<float>({4, 4}, std::vector<float>(16))).Input(MakeTensor<float>({1, 1}, std::vector<float>(1)));
  EXPECT_EQ(rank.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester bias("Conv", 11);
  bias.Input(MakeTensor<float>({1, 1, 4, 4}, std::vector<float>(16)))
      .Input(MakeTensor<float>({2, 1, 3, 3}, std::vector<float>(18)))
      .Input(MakeTensor<float>({3}, std::vector<float>(3)));
  EXPECT_EQ(bias.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester stride("Conv", 11);
  stride.Input(MakeTensor<float>({1, 1, 4, 4}, std::vector<float>(16)))
      .Input(MakeTensor<float>({1, 1, 3, 3}, std::vector<float>(9)))
      .Attr("strides", std::vector<int64_t>{0, 1});
  EXPECT_EQ(stride.Run(1).status().code(), StatusCode::kInvalidArgument);
}

// Geometry that ONNX's reference and ONNX Runtime reject: each case must fail with
// InvalidArgument naming the offending value (it used to give an empty tensor, or run).
struct GeometryErrorCase {
  std::string name, op;
  std::vector<int64_t> x, w;
  std::vector<std::pair<std::string, std::vector<int64_t>>> attrs;
  std::string message;  // a substring the error must contain
};

class ConvGeometryErrorTest : public ::testing::TestWithParam<GeometryErrorCase> {};

TEST_P(ConvGeometryErrorTest, IsInvalidArgumentNamingTheValue) {
  const GeometryErrorCase& c = GetParam();
  KernelTester t(c.op, c.op == "Conv" ? 11 : 22);
  t.Input(MakeTensor<float>(Shape(c.x), std::vector<float>(Product(c.x))))
      .Input(MakeTensor<float>(Shape(c.w), std::vector<float>(Product(c.w))));
  for (const auto& [name, values] : c.attrs) t.Attr(name, values);
  for (int participants : {1, 4}) {
    Status s = t.Run(participants).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Geometry, ConvGeometryErrorTest,
                         ::testing::Values(GeometryErrorCase{"KernelLargerThanInput",
                                                             "Conv",
                                                             {1, 1, 2, 2},
                                                             {1, 1, 3, 3},
                                                             {},
                                                             "extent 3 > padded length 2"},
                                           GeometryErrorCase{"KernelLargerThanPaddedInput1D",
                                                             "Conv",
                                                             {1, 1, 2},
                                                             {1, 1, 5},
                                                             {{"pads", {1, 1}}},
                                                             "extent 5 > padded length 4"},
                                           GeometryErrorCase{"DilatedKernelLargerThanInput",
                                                             "Conv",
                                                             {1, 1, 4, 4},
                                                             {1, 1, 2, 2},
                                                             {{"dilations", {4, 1}}},
                                                             "extent 5 > padded length 4"},
                                           GeometryErrorCase{"KernelLargerThanPaddedInput2D",
                                                             "Conv",
                                                             {1, 1, 4, 4},
                                                             {1, 1, 7, 1},
                                                             {{"pads", {1, 0, 1, 0}}},
                                                             "extent 7 > padded length 6"},
                                           GeometryErrorCase{"NegativePads",
                                                             "Conv",
                                                             {1, 1, 4, 4},
                                                             {1, 1, 3, 3},
                                                             {{"pads", {0, -1, 0, 0}}},
                                                             "pads [0,-1,0,0] must be >= 0"},
                                           GeometryErrorCase{"ZeroDilation",
                                                             "Conv",
                                                             {1, 1, 4, 4},
                                                             {1, 1, 3, 3},
                                                             {{"dilations", {0, 1}}},
                                                             "dilations [0,1] must be >= 1"},
                                           GeometryErrorCase{"OutputPaddingEqualToStride",
                                                             "ConvTranspose",
                                                             {1, 1, 2, 2},
                                                             {1, 1, 3, 3},
                                                             {{"strides", {2, 2}}, {"output_padding", {2, 2}}},
                                                             "output_padding [2,2]"},
                                           GeometryErrorCase{"OutputPaddingAboveStride",
                                                             "ConvTranspose",
                                                             {1, 1, 2, 2},
                                                             {1, 1, 3, 3},
                                                             {{"strides", {2, 3}}, {"output_padding", {1, 5}}},
                                                             "(axis 1: 5 vs stride 3, dilation 1)"},
                                           GeometryErrorCase{"OutputPaddingWithDefaultStride",
                                                             "ConvTranspose",
                                                             {1, 1, 2, 2},
                                                             {1, 1, 3, 3},
                                                             {{"output_padding", {1, 0}}},
                                                             "(axis 0: 1 vs stride 1, dilation 1)"},
                                           GeometryErrorCase{"OutputPaddingEqualToTheLargerDilation",
                                                             "ConvTranspose",
                                                             {1, 1, 2, 2},
                                                             {1, 1, 3, 3},
                                                             {{"dilations", {3, 1}}, {"output_padding", {3, 0}}},
                                                             "(axis 0: 3 vs stride 1, dilation 3)"},
                                           GeometryErrorCase{"NegativeOutputPadding",
                                                             "ConvTranspose",
                                                             {1, 1, 2, 2},
                                                             {1, 1, 3, 3},
                                                             {{"strides", {2, 2}}, {"output_padding", {0, -1}}},
                                                             "must be >= 0 and smaller than max(stride, dilation)"}),
                         [](const ::testing::TestParamInfo<GeometryErrorCase>& info) { return info.param.name; });

// ONNX Runtime's bound: output_padding below a dilation larger than the stride is allowed.
TEST(ConvTranspose, OutputPaddingBelowADilationLargerThanTheStrideRuns) {
  KernelTester t("ConvTranspose", 22);
  t.Input(MakeTensor<float>({1, 1, 2, 2}, std::vector<float>(4, 1.0f)))
      .Input(MakeTensor<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)))
      .Attr("dilations", std::vector<int64_t>{2, 1})
      .Attr("output_padding", std::vector<int64_t>{1, 0});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // out = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1.
  EXPECT_EQ((*out)[0].tensor().shape(), Shape({1, 1, 7, 4}));
}

// A kernel exactly as large as the padded input still gives one output per axis.
TEST(Conv, KernelAsLargeAsThePaddedInputGivesOneOutput) {
  KernelTester t("Conv", 11);
  t.Input(MakeTensor<float>({1, 1, 2, 2}, std::vector<float>(4, 1.0f)))
      .Input(MakeTensor<float>({1, 1, 4, 4}, std::vector<float>(16, 1.0f)))
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto out = t.Run(1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().shape(), Shape({1, 1, 1, 1}));
  EXPECT_EQ((*out)[0].tensor().data<float>()[0], 4.0f);
}

// ConvTranspose: Y[n, g*M/G + m, i*s - p + k*d] += X[n, g*C/G + c, i] W[g*C/G + c, m, k], plus bias.
struct TransposeCase {
  std::vector<int64_t> x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
};

void CheckConvTranspose(const TransposeCase& c, const std::vector<int64_t>& pads_begin,
                        const std::vector<int64_t>& out_sp) {
  const auto x = Random(Product(c.x), 4), w = Random(Product(c.w), 5), b = Random(c.w[1] * c.group, 6);
  KernelTester t("ConvTranspose", 22);
  t.Input(MakeTensor<float>(Shape(c.x), x))
      .Input(MakeTensor<float>(Shape(c.w), w))
      .Input(MakeTensor<float>({c.w[1] * c.group}, b));
  t.Attr("group", c.group);
  if (!c.strides.empty()) t.Attr("strides", c.strides);
  if (!c.dilations.empty()) t.Attr("dilations", c.dilations);
  if (!c.pads.empty()) t.Attr("pads", c.pads);
  if (!c.output_padding.empty()) t.Attr("output_padding", c.output_padding);
  if (!c.output_shape.empty()) t.Attr("output_shape", c.output_shape);
  if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad);
  ForceParallel(t, false);
  const size_t r = c.x.size() - 2;
  const int64_t n_batch = c.x[0], channels = c.x[1], mg = c.w[1], m_out = mg * c.group, cg = channels / c.group;
  const std::vector<int64_t> in_sp(c.x.begin() + 2, c.x.end()), k_sp(c.w.begin() + 2, c.w.end());
  std::vector<int64_t> y_shape = {n_batch, m_out};
  y_shape.insert(y_shape.end(), out_sp.begin(), out_sp.end());
  const auto got = testing::SerialMatchesParticipants<float>(t, Shape(y_shape));
  const int64_t out_size = Product(out_sp), in_size = Product(in_sp), k_size = Product(k_sp);
  std::vector<double> want(n_batch * m_out * out_size);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < m_out; ++m) {
      for (int64_t o = 0; o < out_size; ++o) want[(n * m_out + m) * out_size + o] = b[m];
      const int64_t grp = m / mg;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const int64_t c_in = grp * cg + ci;
        for (int64_t i = 0; i < in_size; ++i) {
          const auto ii = Unflatten(i, in_sp);
          for (int64_t k = 0; k < k_size; ++k) {
            const auto ki = Unflatten(k, k_sp);
            std::vector<int64_t> oi(r);
            bool inside = true;
            for (size_t a = 0; a < r; ++a) {
              oi[a] = ii[a] * (c.strides.empty() ? 1 : c.strides[a]) - pads_begin[a] +
                      ki[a] * (c.dilations.empty() ? 1 : c.dilations[a]);
              inside = inside && oi[a] >= 0 && oi[a] < out_sp[a];
            }
            if (!inside) continue;
            want[(n * m_out + m) * out_size + Flatten(oi, out_sp)] +=
                double(x[(n * channels + c_in) * in_size + i]) * w[(c_in * mg + m % mg) * k_size + k];
          }
        }
      }
    }
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
}

TEST(ConvTranspose, StridesPadsGroupsAndOutputShape) {
  // out = s*(in-1) + output_padding + (k-1)*d + 1 - pads.
  CheckConvTranspose({{1, 3, 5, 5}, {3, 4, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}}, {1, 1}, {9, 9});
  CheckConvTranspose({{2, 4, 4, 6}, {4, 3, 3, 2}, 2, {2, 3}, {1, 2}, {0, 1, 1, 0}, {1, 2}}, {0, 1}, {9, 19});
  CheckConvTranspose({{1, 2, 7}, {2, 5, 4}, 1, {3}, {}, {}, {}}, {0}, {22});
  CheckConvTranspose({{1, 2, 3, 3, 2}, {2, 2, 2, 3, 2}, 1, {1, 2, 2}}, {0, 0, 0}, {4, 7, 4});
  // output_shape without pads: total padding 3*(3-1)+3-10 = -1 -> begin 0, end -1 (one extra row).
  CheckConvTranspose({{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {}, {}, {10, 8}}, {0, 0}, {10, 8});
  // SAME_UPPER: out = in * stride, total = 2*(4-1)+3-8 = 1 -> begin 0.
  CheckConvTranspose({{1, 2, 4, 4}, {2, 2, 3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER"}, {0, 0}, {8, 8});
  CheckConvTranspose({{1, 2, 4, 4}, {2, 2, 3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_LOWER"}, {1, 1}, {8, 8});
  // Depthwise-style groups.
  CheckConvTranspose({{1, 6, 5, 5}, {6, 1, 3, 3}, 6, {1, 1}}, {0, 0}, {7, 7});
}

}  // namespace
}  // namespace onnx_light
