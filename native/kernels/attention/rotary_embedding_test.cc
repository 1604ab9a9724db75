// RotaryEmbedding against a naive double-precision rotation written from the operator's
// definition, and identical results for 1, 2, 4 and 8 participants.
#include <cmath>
#include <string>
#include <vector>

#include "native/kernels/attention/attention_test_util.h"

namespace onnx_light {
namespace {

using attention_testing::ExpectNear;
using attention_testing::MakeFloatTensor;
using attention_testing::RandomValues;
using attention_testing::ToleranceFor;
using testing::ExpectIdentical;
using testing::KernelTester;
using testing::MakeTensor;

struct RotaryCase {
  std::string name;
  int64_t batch = 2, heads = 3, seq = 5, head = 8, rotary_dim = 0, max_positions = 11;
  bool three_d = false, interleaved = false, position_ids = true;
  DataType type = DataType::kFloat;
};

void PrintTo(const RotaryCase& c, std::ostream* os) { *os << c.name; }

class RotaryCases : public ::testing::TestWithParam<RotaryCase> {};

TEST_P(RotaryCases, MatchesNaiveRotationForEveryParticipantCount) {
  const RotaryCase& c = GetParam();
  const int64_t rot = c.rotary_dim == 0 ? c.head : c.rotary_dim, half = rot / 2;
  // x in (B, S, H, D) order for the reference; the kernel sees its own layout.
  std::vector<double> x = RandomValues(c.batch * c.seq * c.heads * c.head, 1);
  const int64_t cache_rows = c.position_ids ? c.max_positions : c.batch * c.seq;
  std::vector<double> cos = RandomValues(cache_rows * half, 2), sin = RandomValues(cache_rows * half, 3);
  std::vector<int64_t> positions(c.batch * c.seq);
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>((i * 7 + 3) % c.max_positions);

  std::vector<double> x_layout(x.size());  // (B, H, S, D) unless 3-D
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seq; ++s)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t d = 0; d < c.head; ++d) {
          const int64_t bshd = ((b * c.seq + s) * c.heads + h) * c.head + d;
          const int64_t layout = c.three_d ? bshd : ((b * c.heads + h) * c.seq + s) * c.head + d;
          x_layout[layout] = x[bshd];
        }
  const Shape x_shape = c.three_d ? Shape{c.batch, c.seq, c.heads * c.head} : Shape{c.batch, c.heads, c.seq, c.head};
  const Shape cache_shape = c.position_ids ? Shape{c.max_positions, half} : Shape{c.batch, c.seq, half};
  KernelTester t("RotaryEmbedding", 23);
  t.Input(MakeFloatTensor(c.type, x_shape, &x_layout))
      .Input(MakeFloatTensor(c.type, cache_shape, &cos))
      .Input(MakeFloatTensor(c.type, cache_shape, &sin));
  if (c.position_ids) t.Input(MakeTensor<int64_t>(Shape{c.batch, c.seq}, positions));
  if (c.three_d) t.Attr("num_heads", c.heads);
  if (c.rotary_dim) t.Attr("rotary_embedding_dim", c.rotary_dim);
  if (c.interleaved) t.Attr("interleaved", int64_t{1});

  std::vector<double> expected(x_layout.size());
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seq; ++s)
      for (int64_t h = 0; h < c.heads; ++h) {
        const int64_t base =
            c.three_d ? ((b * c.seq + s) * c.heads + h) * c.head : ((b * c.heads + h) * c.seq + s) * c.head;
        const int64_t cache_row = c.position_ids ? positions[b * c.seq + s] : b * c.seq + s;
        for (int64_t d = rot; d < c.head; ++d) expected[base + d] = x_layout[base + d];
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = c.interleaved ? 2 * i : i, i2 = c.interleaved ? 2 * i + 1 : i + half;
          const double co = cos[cache_row * half + i], si = sin[cache_row * half + i];
          expected[base + i1] = co * x_layout[base + i1] - si * x_layout[base + i2];
          expected[base + i2] = si * x_layout[base + i1] + co * x_layout[base + i2];
        }
      }
  auto serial = t.Run(1);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  ExpectNear(expected, serial->at(0).tensor(), ToleranceFor(c.type), c.name);
  t.Tuning(param::kMinimumElements, int64_t{1});
  const std::vector<Value> forced = testing::DeterministicOutputs(t);
  ASSERT_FALSE(forced.empty());
  ExpectIdentical(serial->at(0), forced.at(0), c.name + " on the forced parallel path");
}

std::vector<RotaryCase> Cases() {
  std::vector<RotaryCase> cases;
  auto add = [&](std::string name, auto edit) {
    RotaryCase c;
    c.name = std::move(name);
    edit(c);
    cases.push_back(c);
  };
  add("halves_4d", [](RotaryCase&) {});
  add("halves_3d", [](RotaryCase& c) { c.three_d = true; });
  add("interleaved", [](RotaryCase& c) { c.interleaved = true; });
  add("partial_rotary_dim", [](RotaryCase& c) {
    c.rotary_dim = 4;
    c.head = 10;
  });
  add("partial_interleaved_3d", [](RotaryCase& c) {
    c.rotary_dim = 6;
    c.interleaved = true;
    c.three_d = true;
  });
  add("no_position_ids", [](RotaryCase& c) { c.position_ids = false; });
  add("seq_1_heads_1", [](RotaryCase& c) {
    c.seq = 1;
    c.heads = 1;
  });
  add("batch_0", [](RotaryCase& c) { c.batch = 0; });
  add("float16", [](RotaryCase& c) {
    c.type = DataType::kFloat16;
    c.interleaved = true;
  });
  add("bfloat16", [](RotaryCase& c) {
    c.type = DataType::kBFloat16;
    c.three_d = true;
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(RotaryEmbedding, RotaryCases, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<RotaryCase>& info) { return info.param.name; });

TEST(RotaryEmbedding, RejectsBadInputs) {
  auto f = [](Shape s) {
    std::vector<double> v = RandomValues(s.num_elements(), 1);
    return MakeFloatTensor(DataType::kFloat, s, &v);
  };
  {  // position id past the cache
    KernelTester t("RotaryEmbedding", 23);
    t.Input(f({1, 2, 3, 8})).Input(f({4, 4})).Input(f({4, 4})).Input(MakeTensor<int64_t>(Shape{1, 3}, {0, 1, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // cache width not rotary_dim / 2
    KernelTester t("RotaryEmbedding", 23);
    t.Input(f({1, 2, 3, 8})).Input(f({4, 3})).Input(f({4, 3})).Input(MakeTensor<int64_t>(Shape{1, 3}, {0, 1, 2}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // 3-D without num_heads
    KernelTester t("RotaryEmbedding", 23);
    t.Input(f({1, 3, 8})).Input(f({1, 3, 4})).Input(f({1, 3, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // odd rotary dim
    KernelTester t("RotaryEmbedding", 23);
    t.Input(f({1, 2, 3, 8})).Input(f({4, 1})).Input(f({4, 1})).Input(MakeTensor<int64_t>(Shape{1, 3}, {0, 1, 2}));
    t.Attr("rotary_embedding_dim", int64_t{3});
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace onnx_light
