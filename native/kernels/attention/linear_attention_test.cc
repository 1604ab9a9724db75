// LinearAttention against a naive double-precision recurrence written from the operator's
// update rules, and identical results for 1, 2, 4 and 8 participants.
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

struct LinearCase {
  std::string name;
  std::string rule = "gated_delta";
  int64_t batch = 2, steps = 4, q_heads = 2, kv_heads = 2, dk = 3, dv = 5;
  bool past = true, decay_per_key = false, beta_per_head = true;
  float scale = 0;
  DataType type = DataType::kFloat;
};

void PrintTo(const LinearCase& c, std::ostream* os) { *os << c.name; }

class LinearCases : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearCases, MatchesNaiveRecurrenceForEveryParticipantCount) {
  const LinearCase& c = GetParam();
  const bool gated = c.rule == "gated" || c.rule == "gated_delta", delta = c.rule == "delta" || c.rule == "gated_delta";
  const int64_t b_ = c.batch, t_ = c.steps, group = c.q_heads / c.kv_heads;
  std::vector<double> q = RandomValues(b_ * t_ * c.q_heads * c.dk, 1), k = RandomValues(b_ * t_ * c.kv_heads * c.dk, 2);
  std::vector<double> v = RandomValues(b_ * t_ * c.kv_heads * c.dv, 3),
                      s0 = RandomValues(b_ * c.kv_heads * c.dk * c.dv, 4);
  const int64_t decay_width = c.decay_per_key ? c.kv_heads * c.dk : c.kv_heads,
                beta_width = c.beta_per_head ? c.kv_heads : 1;
  std::vector<double> decay = RandomValues(b_ * t_ * decay_width, 5, -0.5, 0.0),
                      beta = RandomValues(b_ * t_ * beta_width, 6, 0.0, 1.0);
  KernelTester t("LinearAttention", 27);
  t.Input(MakeFloatTensor(c.type, Shape{b_, t_, c.q_heads * c.dk}, &q))
      .Input(MakeFloatTensor(c.type, Shape{b_, t_, c.kv_heads * c.dk}, &k))
      .Input(MakeFloatTensor(c.type, Shape{b_, t_, c.kv_heads * c.dv}, &v));
  if (c.past) {
    t.Input(MakeFloatTensor(c.type, Shape{b_, c.kv_heads, c.dk, c.dv}, &s0));
  } else {
    t.MissingInput();
    std::fill(s0.begin(), s0.end(), 0.0);
  }
  if (gated)
    t.Input(MakeFloatTensor(c.type, Shape{b_, t_, decay_width}, &decay));
  else if (delta)
    t.MissingInput();
  if (delta) t.Input(MakeFloatTensor(c.type, Shape{b_, t_, beta_width}, &beta));
  t.Attr("q_num_heads", c.q_heads).Attr("kv_num_heads", c.kv_heads).Attr("update_rule", c.rule).Outputs(2);
  if (c.scale != 0) t.Attr("scale", c.scale);

  const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.dk));
  std::vector<double> out(b_ * t_ * c.q_heads * c.dv), state = s0;
  for (int64_t b = 0; b < b_; ++b)
    for (int64_t h = 0; h < c.kv_heads; ++h) {
      double* S = &state[(b * c.kv_heads + h) * c.dk * c.dv];
      for (int64_t s = 0; s < t_; ++s) {
        const int64_t bt = b * t_ + s;
        std::vector<double> vt(c.dv);
        for (int64_t m = 0; m < c.dv; ++m) vt[m] = v[(bt * c.kv_heads + h) * c.dv + m];
        auto kt = [&](int64_t d) { return k[(bt * c.kv_heads + h) * c.dk + d]; };
        if (gated)
          for (int64_t d = 0; d < c.dk; ++d)
            for (int64_t m = 0; m < c.dv; ++m)
              S[d * c.dv + m] *= std::exp(decay[bt * decay_width + (c.decay_per_key ? h * c.dk + d : h)]);
        if (delta) {
          const double bv = beta[bt * beta_width + (c.beta_per_head ? h : 0)];
          for (int64_t m = 0; m < c.dv; ++m) {
            double retrieved = 0;
            for (int64_t d = 0; d < c.dk; ++d) retrieved += S[d * c.dv + m] * kt(d);
            vt[m] = bv * (vt[m] - retrieved);
          }
        }
        for (int64_t d = 0; d < c.dk; ++d)
          for (int64_t m = 0; m < c.dv; ++m) S[d * c.dv + m] += kt(d) * vt[m];
        for (int64_t g = 0; g < group; ++g) {
          const int64_t qh = h * group + g;
          for (int64_t m = 0; m < c.dv; ++m) {
            double o = 0;
            for (int64_t d = 0; d < c.dk; ++d) o += q[(bt * c.q_heads + qh) * c.dk + d] * S[d * c.dv + m];
            out[(bt * c.q_heads + qh) * c.dv + m] = scale * o;
          }
        }
      }
    }
  auto serial = t.Run(1);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  ExpectNear(out, serial->at(0).tensor(), ToleranceFor(c.type), c.name + " output");
  ExpectNear(state, serial->at(1).tensor(), ToleranceFor(c.type), c.name + " present_state");
  t.Tuning(param::kMinimumMultiplyAdds, int64_t{1});
  const std::vector<Value> forced = testing::DeterministicOutputs(t);
  ASSERT_EQ(forced.size(), 2u);
  for (int o = 0; o < 2; ++o) ExpectIdentical(serial->at(o), forced.at(o), c.name + " on the forced parallel path");
}

std::vector<LinearCase> Cases() {
  std::vector<LinearCase> cases;
  auto add = [&](std::string name, auto edit) {
    LinearCase c;
    c.name = std::move(name);
    edit(c);
    cases.push_back(c);
  };
  add("linear", [](LinearCase& c) { c.rule = "linear"; });
  add("gated_per_key_decay", [](LinearCase& c) {
    c.rule = "gated";
    c.decay_per_key = true;
  });
  add("delta_scalar_beta", [](LinearCase& c) {
    c.rule = "delta";
    c.beta_per_head = false;
  });
  add("gated_delta_gqa", [](LinearCase& c) {
    c.q_heads = 6;
    c.kv_heads = 2;
  });
  add("gated_delta_no_past_scaled", [](LinearCase& c) {
    c.past = false;
    c.scale = 0.7f;
  });
  add("decode_step", [](LinearCase& c) { c.steps = 1; });
  add("batch_0", [](LinearCase& c) { c.batch = 0; });
  add("float16", [](LinearCase& c) {
    c.type = DataType::kFloat16;
    c.rule = "gated";
  });
  add("bfloat16_mqa", [](LinearCase& c) {
    c.type = DataType::kBFloat16;
    c.q_heads = 4;
    c.kv_heads = 1;
    c.rule = "linear";
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(LinearAttention, LinearCases, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<LinearCase>& info) { return info.param.name; });

TEST(LinearAttention, RejectsBadInputs) {
  auto f = [](Shape s) {
    std::vector<double> v = RandomValues(s.num_elements(), 1);
    return MakeFloatTensor(DataType::kFloat, s, &v);
  };
  {  // gated rule without decay
    KernelTester t("LinearAttention", 27);
    t.Input(f({1, 2, 4})).Input(f({1, 2, 4})).Input(f({1, 2, 4})).Outputs(2);
    t.Attr("q_num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("update_rule", std::string("gated"));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // kv heads not dividing query heads
    KernelTester t("LinearAttention", 27);
    t.Input(f({1, 2, 6})).Input(f({1, 2, 4})).Input(f({1, 2, 4})).Outputs(2);
    t.Attr("q_num_heads", int64_t{3}).Attr("kv_num_heads", int64_t{2}).Attr("update_rule", std::string("linear"));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // past_state of the wrong shape
    KernelTester t("LinearAttention", 27);
    t.Input(f({1, 2, 4})).Input(f({1, 2, 4})).Input(f({1, 2, 4})).Input(f({1, 1, 4, 3})).Outputs(2);
    t.Attr("q_num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("update_rule", std::string("linear"));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // unknown rule
    KernelTester t("LinearAttention", 27);
    t.Input(f({1, 2, 4})).Input(f({1, 2, 4})).Input(f({1, 2, 4})).Outputs(2);
    t.Attr("q_num_heads", int64_t{1}).Attr("kv_num_heads", int64_t{1}).Attr("update_rule", std::string("mamba"));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace onnx_light
