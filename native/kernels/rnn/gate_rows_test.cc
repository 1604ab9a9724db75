// Every ISA variant of the gate rows (gate_rows.h) against the portable variant (libm per
// element), over lengths covering full vectors, tails and one element; and an element's
// value independent of its position in the row (the tail runs the vector code); the
// packed step product against a double oracle; the fused LSTM gate row against its
// formulas in double, and a unit's result independent of its position in the row; the
// fused GRU rows (all three) likewise.
// Variants this CPU cannot run (or the ISA cap excludes) are reported as skipped, by name.
#include "native/kernels/rnn/gate_rows.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "native/kernels/common/isa_test_util.h"

namespace onnx_light {
namespace rnn {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

const std::vector<int64_t> kLengths = {1, 3, 7, 8, 9, 15, 16, 17, 33, 64, 100};

class GateRowsVariantTest : public ::testing::TestWithParam<IsaVariant<GateRows>> {};

// math.h's sigmoid and tanh are within a few float ulps of libm: 4e-7 relative (or
// absolute near 0, where tanh is x and sigmoid 1/2) bounds them.
TEST_P(GateRowsVariantTest, MatchesPortableWithinFloatRounding) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const GateRows& portable = PortableVariant(GateRowsVariants()).impl;
  for (int64_t n : kLengths) {
    for (int f = 0; f < 2; ++f) {
      std::vector<float> got = Random(n, static_cast<uint32_t>(n)), want = got;
      (f == 0 ? v.sigmoid : v.tanh)(got.data(), n);
      (f == 0 ? portable.sigmoid : portable.tanh)(want.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double bound = 4e-7 * std::max({std::fabs(double{got[i]}), std::fabs(double{want[i]}), 1e-3});
        EXPECT_LE(std::fabs(double{got[i]} - double{want[i]}), bound)
            << (f == 0 ? "sigmoid" : "tanh") << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST_P(GateRowsVariantTest, ValueDoesNotDependOnPositionInRow) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const std::vector<float> base = Random(37, 5);
  std::vector<float> whole = base;
  v.tanh(whole.data(), 37);
  for (int64_t i = 0; i < 37; ++i) {
    float single = base[i];
    v.tanh(&single, 1);
    EXPECT_EQ(single, whole[i]) << "i=" << i;
  }
}

TEST_P(GateRowsVariantTest, SaturatesAndKeepsNan) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  std::vector<float> s = {-1000.0f, 1000.0f, 0.0f, NAN};
  std::vector<float> t = s;
  v.sigmoid(s.data(), 4);
  v.tanh(t.data(), 4);
  EXPECT_EQ(s[0], 0.0f);
  EXPECT_EQ(s[1], 1.0f);
  EXPECT_EQ(s[2], 0.5f);
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_EQ(t[0], -1.0f);
  EXPECT_EQ(t[1], 1.0f);
  EXPECT_EQ(t[2], 0.0f);
  EXPECT_TRUE(std::isnan(t[3]));
}

// The packed step product against a double oracle: rows 1-8 (every row count a pass takes,
// and every split into passes), columns around one and two panel widths (whole, partial,
// an odd last panel, several tiles), k around the unrolling by 4 (remainders 0-3), lda/ldc
// wider than the row.
// Each output is a chain of k float multiply-adds of terms bounded by |a||r|: its error is
// at most k * 2^-23 * sum |a_q r_q| (2 roundings per term without FMA, within the bound's
// slack since the chain's own error dominates).
TEST_P(GateRowsVariantTest, StepProductMatchesDoubleOracle) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  for (int64_t k : {1, 3, 5, 64, 129, 130}) {
    for (int64_t n : {1, 31, 32, 33, 63, 64, 65, 100, 128}) {
      for (int64_t m = 1; m <= 8; ++m) {
        const int64_t lda = k + 3, ldr = k + 1, ldc = n + 2;
        const std::vector<float> a = Random(m * lda, static_cast<uint32_t>(k * 1000 + m));
        const std::vector<float> r = Random(n * ldr, static_cast<uint32_t>(k * 7 + n));
        std::vector<float> packed(static_cast<size_t>(StepPanelFloats(n, k)), NAN);
        PackStepPanels(r.data(), n, k, ldr, packed.data());
        std::vector<float> c(static_cast<size_t>(m * ldc), -7.0f);
        v.product(m, n, k, a.data(), lda, packed.data(), c.data(), ldc);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < ldc; ++j) {
            if (j >= n) {  // past the n columns: untouched
              EXPECT_EQ(c[i * ldc + j], -7.0f) << "m=" << m << " n=" << n << " k=" << k << " i=" << i << " j=" << j;
              continue;
            }
            double want = 0, magnitude = 0;
            for (int64_t q = 0; q < k; ++q) {
              want += double{a[i * lda + q]} * double{r[j * ldr + q]};
              magnitude += std::fabs(double{a[i * lda + q]} * double{r[j * ldr + q]});
            }
            EXPECT_LE(std::fabs(c[i * ldc + j] - want), double(k) * 0x1p-23 * magnitude)
                << "m=" << m << " n=" << n << " k=" << k << " i=" << i << " j=" << j;
          }
        }
      }
    }
  }
}

// A row's outputs do not depend on how many rows share its pass (the batch-row blocks of
// a step) nor on which panel or column holds them.
TEST_P(GateRowsVariantTest, StepProductRowDoesNotDependOnRowsBesideIt) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const int64_t m = 7, n = 70, k = 45;
  const std::vector<float> a = Random(m * k, 11), r = Random(n * k, 12);
  std::vector<float> packed(static_cast<size_t>(StepPanelFloats(n, k)));
  PackStepPanels(r.data(), n, k, k, packed.data());
  std::vector<float> all(static_cast<size_t>(m * n));
  v.product(m, n, k, a.data(), k, packed.data(), all.data(), n);
  for (int64_t i = 0; i < m; ++i) {
    std::vector<float> one(static_cast<size_t>(n));
    v.product(1, n, k, a.data() + i * k, k, packed.data(), one.data(), n);
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(one[j], all[i * n + j]) << "i=" << i << " j=" << j;
  }
  // Column 40 alone, packed as the first column of its own panel.
  std::vector<float> single(static_cast<size_t>(StepPanelFloats(1, k)));
  PackStepPanels(r.data() + 40 * k, 1, k, k, single.data());
  float c = 0;
  v.product(1, 1, k, a.data() + 2 * k, k, single.data(), &c, 1);
  EXPECT_EQ(c, all[2 * n + 40]);
}

// The LSTM gate row's inputs for n units (gate_args.h's layout), in [-2, 2].
struct LstmRowInputs {
  int64_t n;
  std::vector<float> product, projection, bias, peep, cell;
  explicit LstmRowInputs(int64_t units, uint32_t seed) : n(units) {
    auto scaled = [](std::vector<float> v) {
      for (float& x : v) x /= 6.0f;
      return v;
    };
    product = scaled(Random(4 * n, seed));
    projection = scaled(Random(4 * n, seed + 1));
    bias = scaled(Random(4 * n, seed + 2));
    peep = scaled(Random(3 * n, seed + 3));
    cell = scaled(Random(n, seed + 4));
  }
  // Runs `lstm` on a copy of the cell state: returns {c', h}.
  std::pair<std::vector<float>, std::vector<float>> Run(void (*lstm)(const LstmRowArgs&)) const {
    std::vector<float> c = cell, h(static_cast<size_t>(n), NAN);
    lstm(LstmRowArgs{n, product.data(), projection.data(), bias.data(), peep.data(), peep.data() + n,
                     peep.data() + 2 * n, c.data(), h.data()});
    return {c, h};
  }
};

// Every variant against the formulas of gate_args.h in double (libm). The gate sums are at
// most 4 + 2 * 1/3 * 1/3 in magnitude, rounded about 3 times in float (and fused or not):
// under 1e-6; sigmoid and tanh add 4e-7 relative (see above) and have slopes of at most
// 1, and c' and h combine two such values of magnitude at most 1 with a cell of at most
// 1/3: 1e-5 absolute bounds the sum with room.
TEST_P(GateRowsVariantTest, LstmRowMatchesDoubleFormulas) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  for (int64_t n : kLengths) {
    const LstmRowInputs in(n, static_cast<uint32_t>(100 + n));
    const auto [c, h] = in.Run(v.lstm);
    auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    for (int64_t j = 0; j < n; ++j) {
      auto sum = [&](int g) {
        return double{in.product[g * n + j]} + double{in.projection[g * n + j]} + double{in.bias[g * n + j]};
      };
      const double c0 = in.cell[j];
      const double i = sigmoid(sum(0) + in.peep[j] * c0), f = sigmoid(sum(2) + in.peep[2 * n + j] * c0);
      const double c1 = f * c0 + i * std::tanh(sum(3));
      const double o = sigmoid(sum(1) + in.peep[n + j] * c1);
      EXPECT_NEAR(c[j], c1, 1e-5) << "n=" << n << " j=" << j;
      EXPECT_NEAR(h[j], o * std::tanh(c1), 1e-5) << "n=" << n << " j=" << j;
    }
  }
}

// A unit's c' and h are the same bits alone (the tail's padded pass) as inside a row of
// 37 (a whole vector or the tail, whatever the ISA's width).
TEST_P(GateRowsVariantTest, LstmRowUnitDoesNotDependOnPositionInRow) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const LstmRowInputs row(37, 9);
  const auto [c, h] = row.Run(v.lstm);
  for (int64_t j = 0; j < 37; ++j) {
    LstmRowInputs unit(1, 0);
    for (int g = 0; g < 4; ++g) {
      unit.product[g] = row.product[g * 37 + j];
      unit.projection[g] = row.projection[g * 37 + j];
      unit.bias[g] = row.bias[g * 37 + j];
    }
    for (int g = 0; g < 3; ++g) unit.peep[g] = row.peep[g * 37 + j];
    unit.cell[0] = row.cell[j];
    const auto [c1, h1] = unit.Run(v.lstm);
    EXPECT_EQ(c1[0], c[j]) << "j=" << j;
    EXPECT_EQ(h1[0], h[j]) << "j=" << j;
  }
}

// The GRU rows' inputs for n units (gate_args.h's GruRowArgs), in [-2, 2].
struct GruRowInputs {
  int64_t n;
  std::vector<float> product, projection, bias, bias_rh, h_prev;
  explicit GruRowInputs(int64_t units, uint32_t seed) : n(units) {
    auto scaled = [](std::vector<float> v) {
      for (float& x : v) x /= 6.0f;
      return v;
    };
    product = scaled(Random(3 * n, seed));
    projection = scaled(Random(3 * n, seed + 1));
    bias = scaled(Random(3 * n, seed + 2));
    bias_rh = scaled(Random(n, seed + 3));
    h_prev = scaled(Random(n, seed + 4));
  }
  struct Outputs {
    std::vector<float> z, reset, hidden;
  };
  // gru_linear, or gru_reset then gru_hidden on the same z (the kernel's two rounds, the
  // second's h product taken from `product` as given).
  Outputs Run(const GateRows& v, bool linear_before_reset) const {
    Outputs out{std::vector<float>(static_cast<size_t>(n), NAN), std::vector<float>(static_cast<size_t>(n), NAN),
                std::vector<float>(static_cast<size_t>(n), NAN)};
    const GruRowArgs args{n,
                          product.data(),
                          projection.data(),
                          bias.data(),
                          bias_rh.data(),
                          h_prev.data(),
                          out.z.data(),
                          out.reset.data(),
                          out.hidden.data()};
    if (linear_before_reset) {
      v.gru_linear(args);
    } else {
      v.gru_reset(args);
      v.gru_hidden(args);
    }
    return out;
  }
};

// Every variant against the formulas of gate_args.h in double (libm), both forms. The sums
// are at most 1 + 1/3 * (1/3 + 1/3) + 2/3 in magnitude, rounded a few times in float
// (fused or not): under 1e-6; sigmoid and tanh add 4e-7 relative with slopes of at most
// 1; h blends two values of magnitude at most 1: 1e-5 absolute bounds the sum with room.
TEST_P(GateRowsVariantTest, GruRowsMatchDoubleFormulas) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  for (bool linear : {false, true}) {
    for (int64_t n : kLengths) {
      const GruRowInputs in(n, static_cast<uint32_t>(200 + n));
      const auto out = in.Run(v, linear);
      for (int64_t j = 0; j < n; ++j) {
        auto sum = [&](int g) {
          return double{in.product[g * n + j]} + double{in.projection[g * n + j]} + double{in.bias[g * n + j]};
        };
        const double z = sigmoid(sum(0)), r = sigmoid(sum(1)), hp = in.h_prev[j];
        const double x = double{in.projection[2 * n + j]} + double{in.bias[2 * n + j]};
        const double candidate = linear ? std::tanh(x + r * (double{in.product[2 * n + j]} + in.bias_rh[j]))
                                        : std::tanh(x + double{in.product[2 * n + j]} + in.bias_rh[j]);
        const std::string where = (linear ? "linear n=" : "reset n=") + std::to_string(n) + " j=" + std::to_string(j);
        EXPECT_NEAR(out.hidden[j], (1 - z) * candidate + z * hp, 1e-5) << where;
        if (!linear) {
          EXPECT_NEAR(out.z[j], z, 1e-6) << where;
          EXPECT_NEAR(out.reset[j], r * hp, 1e-6) << where;
        }
      }
    }
  }
}

// A unit's outputs are the same bits alone (the tail's padded pass) as inside a row of 37;
// gru_linear leaves z and reset untouched, gru_reset writes no hidden.
TEST_P(GateRowsVariantTest, GruRowUnitDoesNotDependOnPositionInRow) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  for (bool linear : {false, true}) {
    const GruRowInputs row(37, 19);
    const auto whole = row.Run(v, linear);
    for (int64_t j = 0; j < 37; ++j) {
      GruRowInputs unit(1, 0);
      for (int g = 0; g < 3; ++g) {
        unit.product[g] = row.product[g * 37 + j];
        unit.projection[g] = row.projection[g * 37 + j];
        unit.bias[g] = row.bias[g * 37 + j];
      }
      unit.bias_rh[0] = row.bias_rh[j];
      unit.h_prev[0] = row.h_prev[j];
      const auto one = unit.Run(v, linear);
      EXPECT_EQ(one.hidden[0], whole.hidden[j]) << "linear=" << linear << " j=" << j;
      if (linear) {
        EXPECT_TRUE(std::isnan(whole.z[j]) && std::isnan(whole.reset[j])) << "j=" << j;
      } else {
        EXPECT_EQ(one.z[0], whole.z[j]) << "j=" << j;
        EXPECT_EQ(one.reset[0], whole.reset[j]) << "j=" << j;
      }
    }
  }
  // gru_reset alone writes z and reset only.
  const GruRowInputs row(21, 23);
  std::vector<float> z(21), reset(21), hidden(21, -3.0f);
  v.gru_reset(GruRowArgs{21, row.product.data(), row.projection.data(), row.bias.data(), row.bias_rh.data(),
                         row.h_prev.data(), z.data(), reset.data(), hidden.data()});
  for (float h : hidden) EXPECT_EQ(h, -3.0f);
}

// gru_reset may write z over the product's own z row (the kernel keeps z in the gate row).
TEST_P(GateRowsVariantTest, GruResetWritesZOverItsProductRow) {
  OL_SKIP_UNLESS_ISA_ENABLED(GetParam());
  const GateRows& v = GetParam().impl;
  const GruRowInputs in(37, 29);
  const auto separate = in.Run(v, false);
  std::vector<float> product = in.product, reset(37), hidden(37);
  const GruRowArgs args{37,
                        product.data(),
                        in.projection.data(),
                        in.bias.data(),
                        in.bias_rh.data(),
                        in.h_prev.data(),
                        product.data(),
                        reset.data(),
                        hidden.data()};
  v.gru_reset(args);
  v.gru_hidden(args);
  for (int64_t j = 0; j < 37; ++j) {
    EXPECT_EQ(product[j], separate.z[j]) << "j=" << j;
    EXPECT_EQ(reset[j], separate.reset[j]) << "j=" << j;
    EXPECT_EQ(hidden[j], separate.hidden[j]) << "j=" << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GateRowsVariantTest, ::testing::ValuesIn(GateRowsVariants()),
                         IsaVariantTestName<GateRows>);

}  // namespace
}  // namespace rnn
}  // namespace onnx_light
