// Attention (opsets 23-25) against a naive double-precision reference written from the
// operator's specification, plus identical results for 1, 2, 4 and 8 participants.
#include <cmath>
#include <limits>
#include <optional>
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

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct AttentionCase {
  std::string name;
  int opset = 23;
  int64_t batch = 2, q_heads = 2, kv_heads = 2, q_seq = 3, kv_seq = 5, past = 0, head = 8, v_head = 8;
  bool three_d = false;
  DataType type = DataType::kFloat;
  std::vector<int64_t> mask_shape;  // empty: no attn_mask
  bool bool_mask = false;
  bool causal = false;
  std::vector<int64_t> nonpad;  // empty: no nonpad_kv_seqlen
  int64_t left = -1, right = -1;
  float softcap = 0;
  std::optional<float> scale;
  int qk_mode = -1;  // -1: no qk_matmul_output
};

void PrintTo(const AttentionCase& c, std::ostream* os) { *os << c.name; }

// All inputs in (B, H, S, D) order as doubles, plus the kernel's tensors.
struct Inputs {
  std::vector<double> q, k, v, past_k, past_v, mask;
  std::vector<bool> bool_mask;
};

// (B, H, S, D) -> (B, S, H*D).
std::vector<double> HeadsToPacked(const std::vector<double>& x, int64_t b, int64_t h, int64_t s, int64_t d) {
  std::vector<double> out(x.size());
  for (int64_t i0 = 0; i0 < b; ++i0)
    for (int64_t i1 = 0; i1 < h; ++i1)
      for (int64_t i2 = 0; i2 < s; ++i2)
        for (int64_t i3 = 0; i3 < d; ++i3)
          out[((i0 * s + i2) * h + i1) * d + i3] = x[((i0 * h + i1) * s + i2) * d + i3];
  return out;
}

// The attention bias of (b, h, i, j) as the specification defines it.
double Bias(const AttentionCase& c, const Inputs& in, int64_t b, int64_t h, int64_t i, int64_t j) {
  const int64_t total = c.past + c.kv_seq;
  double bias = 0;
  if (!c.mask_shape.empty()) {
    const int rank = static_cast<int>(c.mask_shape.size());
    const int64_t index4[4] = {b, h, i, j};
    if (j >= c.mask_shape.back()) return kNegInf;  // a short mask masks the missing keys
    int64_t flat = 0;
    for (int a = 0; a < rank; ++a) {
      const int64_t dim = c.mask_shape[a];
      flat = flat * dim + (dim == 1 ? 0 : index4[4 - rank + a]);
    }
    bias = c.bool_mask ? (in.bool_mask[flat] ? 0.0 : kNegInf) : in.mask[flat];
  }
  int64_t offset = c.past;
  if (c.past == 0 && !c.nonpad.empty()) offset = c.nonpad[b] - c.q_seq;
  const int64_t position = i + offset;
  bool allowed = true;
  if (c.causal) allowed = allowed && j <= position;
  if (c.left >= 0) allowed = allowed && position - j <= c.left;
  if (c.right >= 0) allowed = allowed && j - position <= c.right;
  if (!c.nonpad.empty()) allowed = allowed && j < c.nonpad[b];
  (void)total;
  return allowed ? bias : kNegInf;
}

struct Expected {
  std::vector<double> y, qk;  // y in the kernel's layout; qk (B, Hq, Sq, Skv)
};

Expected NaiveAttention(const AttentionCase& c, const Inputs& in) {
  const int64_t total = c.past + c.kv_seq, group = c.q_heads / c.kv_heads;
  const double scale = c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(c.head));
  auto key = [&](int64_t b, int64_t kvh, int64_t j, int64_t d) {
    return j < c.past ? in.past_k[((b * c.kv_heads + kvh) * c.past + j) * c.head + d]
                      : in.k[((b * c.kv_heads + kvh) * c.kv_seq + j - c.past) * c.head + d];
  };
  auto value = [&](int64_t b, int64_t kvh, int64_t j, int64_t d) {
    return j < c.past ? in.past_v[((b * c.kv_heads + kvh) * c.past + j) * c.v_head + d]
                      : in.v[((b * c.kv_heads + kvh) * c.kv_seq + j - c.past) * c.v_head + d];
  };
  Expected e;
  e.y.assign(c.batch * c.q_heads * c.q_seq * c.v_head, 0.0);
  e.qk.assign(c.batch * c.q_heads * c.q_seq * total, 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.q_heads; ++h)
      for (int64_t i = 0; i < c.q_seq; ++i) {
        std::vector<double> s(total), bias(total);
        bool any = false;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < c.head; ++d)
            dot += in.q[((b * c.q_heads + h) * c.q_seq + i) * c.head + d] * key(b, h / group, j, d);
          double raw = dot * scale;
          double capped = c.softcap > 0 ? c.softcap * std::tanh(raw / c.softcap) : raw;
          bias[j] = Bias(c, in, b, h, i, j);
          any = any || bias[j] != kNegInf;
          s[j] = capped + bias[j];
          double* qk = &e.qk[((b * c.q_heads + h) * c.q_seq + i) * total + j];
          *qk = c.qk_mode == 0 ? raw : c.qk_mode == 1 ? capped : s[j];
        }
        double max = kNegInf, sum = 0;
        for (double x : s) max = std::max(max, x);
        for (double& x : s) sum += (x = any ? std::exp(x - max) : 0.0);
        for (int64_t j = 0; j < total; ++j) {
          const double p = any ? s[j] / sum : 0.0;
          if (c.qk_mode == 3) e.qk[((b * c.q_heads + h) * c.q_seq + i) * total + j] = p;
          for (int64_t d = 0; d < c.v_head; ++d)
            e.y[((b * c.q_heads + h) * c.q_seq + i) * c.v_head + d] += p * value(b, h / group, j, d);
        }
      }
  if (c.three_d) e.y = HeadsToPacked(e.y, c.batch, c.q_heads, c.q_seq, c.v_head);
  return e;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Builds the node's inputs (in the case's layout) and the reference's doubles.
KernelTester MakeTester(const AttentionCase& c, Inputs* in) {
  KernelTester t("Attention", c.opset);
  uint32_t seed = 7;
  auto tensor = [&](std::vector<double>* values, int64_t heads, int64_t seq, int64_t d, bool layout_3d) {
    *values = RandomValues(c.batch * heads * seq * d, seed++);
    if (!layout_3d) return MakeFloatTensor(c.type, Shape{c.batch, heads, seq, d}, values);
    std::vector<double> packed = HeadsToPacked(*values, c.batch, heads, seq, d);
    Tensor tensor = MakeFloatTensor(c.type, Shape{c.batch, seq, heads * d}, &packed);
    // Read the rounded numbers back in (B, H, S, D) order.
    for (int64_t i0 = 0; i0 < c.batch; ++i0)
      for (int64_t i1 = 0; i1 < heads; ++i1)
        for (int64_t i2 = 0; i2 < seq; ++i2)
          for (int64_t i3 = 0; i3 < d; ++i3)
            (*values)[((i0 * heads + i1) * seq + i2) * d + i3] = packed[((i0 * seq + i2) * heads + i1) * d + i3];
    return tensor;
  };
  t.Input(tensor(&in->q, c.q_heads, c.q_seq, c.head, c.three_d));
  t.Input(tensor(&in->k, c.kv_heads, c.kv_seq, c.head, c.three_d));
  t.Input(tensor(&in->v, c.kv_heads, c.kv_seq, c.v_head, c.three_d));
  if (!c.mask_shape.empty()) {
    const int64_t n = Product(c.mask_shape);
    std::vector<double> r = RandomValues(n, seed++);
    if (c.bool_mask) {
      std::vector<bool> bits(n);
      std::vector<bool> storage;
      for (int64_t i = 0; i < n; ++i) bits[i] = r[i] > -0.4;  // about 30% masked
      in->bool_mask = bits;
      std::vector<bool> copy(bits);
      Tensor m = *Tensor::Allocate(DataType::kBool, Shape(c.mask_shape), Allocator::Default());
      for (int64_t i = 0; i < n; ++i) m.data<bool>()[i] = bits[i];
      t.Input(m);
    } else {
      for (int64_t i = 0; i < n; ++i) r[i] = r[i] < -0.8 ? kNegInf : r[i];
      in->mask = r;
      t.Input(MakeFloatTensor(c.type, Shape(c.mask_shape), &in->mask));
    }
  } else if (c.past > 0 || !c.nonpad.empty()) {
    t.MissingInput();
  }
  if (c.past > 0) {
    t.Input(tensor(&in->past_k, c.kv_heads, c.past, c.head, false));
    t.Input(tensor(&in->past_v, c.kv_heads, c.past, c.v_head, false));
  } else if (!c.nonpad.empty()) {
    t.MissingInput().MissingInput();
  }
  if (!c.nonpad.empty()) t.Input(MakeTensor<int64_t>(Shape{c.batch}, c.nonpad));
  if (c.three_d) t.Attr("q_num_heads", c.q_heads).Attr("kv_num_heads", c.kv_heads);
  if (c.causal) t.Attr("is_causal", int64_t{1});
  if (c.left >= 0) t.Attr("left_window_size", c.left);
  if (c.right >= 0) t.Attr("right_window_size", c.right);
  if (c.softcap > 0) t.Attr("softcap", c.softcap);
  if (c.scale) t.Attr("scale", *c.scale);
  if (c.qk_mode >= 0) t.Attr("qk_matmul_output_mode", int64_t{c.qk_mode});
  t.Outputs(c.qk_mode >= 0 ? 4 : c.past > 0 ? 3 : 1);
  return t;
}

class AttentionCases : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionCases, MatchesNaiveReferenceForEveryParticipantCount) {
  const AttentionCase& c = GetParam();
  Inputs in;
  KernelTester t = MakeTester(c, &in);
  t.Tuning("algorithm.query_tile_rows", int64_t{4});  // several tiles per head
  auto serial = t.Run(1);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  const Expected e = NaiveAttention(c, in);
  const double tol = ToleranceFor(c.type);
  ExpectNear(e.y, serial->at(0).tensor(), tol, "Y");
  if (c.past > 0) {  // present = past rows then new rows
    std::vector<double> present_k, present_v;
    for (int64_t bh = 0; bh < c.batch * c.kv_heads; ++bh) {
      present_k.insert(present_k.end(), in.past_k.begin() + bh * c.past * c.head,
                       in.past_k.begin() + (bh + 1) * c.past * c.head);
      present_k.insert(present_k.end(), in.k.begin() + bh * c.kv_seq * c.head,
                       in.k.begin() + (bh + 1) * c.kv_seq * c.head);
      present_v.insert(present_v.end(), in.past_v.begin() + bh * c.past * c.v_head,
                       in.past_v.begin() + (bh + 1) * c.past * c.v_head);
      present_v.insert(present_v.end(), in.v.begin() + bh * c.kv_seq * c.v_head,
                       in.v.begin() + (bh + 1) * c.kv_seq * c.v_head);
    }
    ExpectNear(present_k, serial->at(1).tensor(), 0, "present_key");
    ExpectNear(present_v, serial->at(2).tensor(), 0, "present_value");
  }
  if (c.qk_mode >= 0) ExpectNear(e.qk, serial->at(3).tensor(), tol, "qk_matmul_output");

  // A forced parallel path: same bits.
  t.Tuning(param::kMinimumMultiplyAdds, int64_t{1});
  const std::vector<Value> forced = testing::DeterministicOutputs(t);
  ASSERT_EQ(forced.size(), serial->size());
  for (size_t o = 0; o < serial->size(); ++o) {
    ExpectIdentical(serial->at(o), forced[o], c.name + " output " + std::to_string(o) + " on the forced parallel path");
  }
}

AttentionCase Named(std::string name, AttentionCase c) {
  c.name = std::move(name);
  return c;
}

std::vector<AttentionCase> Cases() {
  std::vector<AttentionCase> cases;
  auto add = [&](std::string name, auto edit) {
    AttentionCase c;
    edit(c);
    cases.push_back(Named(std::move(name), c));
  };
  add("mha_4d", [](AttentionCase&) {});
  add("mha_3d", [](AttentionCase& c) { c.three_d = true; });
  add("gqa_3d_diff_v_head", [](AttentionCase& c) {
    c.three_d = true;
    c.q_heads = 6;
    c.kv_heads = 2;
    c.v_head = 5;
  });
  add("mqa_4d_long", [](AttentionCase& c) {
    c.q_heads = 4;
    c.kv_heads = 1;
    c.q_seq = 37;
    c.kv_seq = 41;
    c.head = 13;
  });
  add("float_mask_2d", [](AttentionCase& c) { c.mask_shape = {3, 5}; });
  add("float_mask_short_keys", [](AttentionCase& c) { c.mask_shape = {3, 2}; });
  add("bool_mask_4d_broadcast", [](AttentionCase& c) {
    c.mask_shape = {2, 1, 3, 5};
    c.bool_mask = true;
  });
  add("float_mask_3d_heads", [](AttentionCase& c) { c.mask_shape = {2, 1, 5}; });
  add("causal_square", [](AttentionCase& c) {
    c.causal = true;
    c.q_seq = 5;
  });
  add("causal_with_past", [](AttentionCase& c) {
    c.causal = true;
    c.past = 4;
    c.kv_seq = 3;
    c.q_seq = 3;
  });
  add("causal_bool_mask_past_3d", [](AttentionCase& c) {
    c.causal = true;
    c.past = 2;
    c.three_d = true;
    c.q_heads = 4;
    c.mask_shape = {3, 7};
    c.bool_mask = true;
  });
  add("past_gqa_qk_softmax", [](AttentionCase& c) {
    c.past = 6;
    c.q_heads = 4;
    c.qk_mode = 3;
    c.mask_shape = {3, 11};
  });
  add("qk_raw_softcap", [](AttentionCase& c) {
    c.softcap = 0.5f;
    c.qk_mode = 0;
    c.scale = 2.0f;
  });
  add("qk_softcapped", [](AttentionCase& c) {
    c.softcap = 0.5f;
    c.qk_mode = 1;
  });
  add("qk_with_bias", [](AttentionCase& c) {
    c.softcap = 2.0f;
    c.qk_mode = 2;
    c.mask_shape = {3, 5};
    c.causal = true;
  });
  add("nonpad_causal", [](AttentionCase& c) {
    c.opset = 24;
    c.nonpad = {4, 2};
    c.causal = true;
    c.q_seq = 2;
    c.kv_seq = 6;
  });
  add("nonpad_negative_offset", [](AttentionCase& c) {
    c.opset = 24;
    c.nonpad = {1, 5};
    c.causal = true;
    c.q_seq = 3;
    c.qk_mode = 3;
  });
  add("window_left_causal", [](AttentionCase& c) {
    c.opset = 25;
    c.left = 2;
    c.causal = true;
    c.q_seq = 6;
    c.kv_seq = 6;
  });
  add("window_bidirectional_past", [](AttentionCase& c) {
    c.opset = 25;
    c.left = 1;
    c.right = 1;
    c.past = 3;
    c.kv_seq = 4;
    c.q_seq = 4;
  });
  add("window_nonpad_mask", [](AttentionCase& c) {
    c.opset = 25;
    c.left = 1;
    c.nonpad = {5, 3};
    c.mask_shape = {5};
    c.bool_mask = true;
  });
  add("fully_masked_rows", [](AttentionCase& c) {
    c.opset = 25;
    c.left = 0;
    c.right = 0;
    c.q_seq = 7;
    c.kv_seq = 3;
    c.qk_mode = 3;
  });
  add("seq_1_decode", [](AttentionCase& c) {
    c.q_seq = 1;
    c.past = 9;
    c.kv_seq = 1;
    c.causal = true;
  });
  add("heads_1_odd_head", [](AttentionCase& c) {
    c.q_heads = 1;
    c.kv_heads = 1;
    c.head = 3;
    c.v_head = 17;
  });
  add("batch_0", [](AttentionCase& c) { c.batch = 0; });
  add("q_seq_0_with_past", [](AttentionCase& c) {
    c.q_seq = 0;
    c.past = 2;
  });
  add("kv_seq_0", [](AttentionCase& c) { c.kv_seq = 0; });
  add("float16", [](AttentionCase& c) {
    c.type = DataType::kFloat16;
    c.causal = true;
    c.past = 2;
    c.mask_shape = {3, 7};
  });
  add("bfloat16_3d", [](AttentionCase& c) {
    c.type = DataType::kBFloat16;
    c.three_d = true;
    c.qk_mode = 2;
    c.mask_shape = {3, 5};
  });
  add("double_gqa", [](AttentionCase& c) {
    c.type = DataType::kDouble;
    c.q_heads = 4;
    c.kv_heads = 2;
    c.qk_mode = 3;
    c.causal = true;
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionCases, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<AttentionCase>& info) { return info.param.name; });

TEST(Attention, ScratchStaysWithinTileBound) {
  AttentionCase c;
  c.batch = 1;
  c.q_heads = 4;
  c.kv_heads = 4;
  c.q_seq = 96;
  c.kv_seq = 96;
  c.head = 16;
  c.v_head = 16;
  Inputs in;
  KernelTester t = MakeTester(c, &in);
  t.Tuning(param::kMinimumMultiplyAdds, int64_t{1}).Tuning("algorithm.query_tile_rows", int64_t{8});
  auto r = t.RunWithDetails(8);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // One packed copy of K and V (4 heads x 96 keys x 16, twice) plus, per participant, an
  // 8-row query tile, 8 score rows, an 8-row output tile, a bias row and 8 normalisers
  // (each 64-byte aligned): far below one full score matrix per participant.
  const int64_t packed = 4 * 2 * 96 * 16 * 4;
  const int64_t per_participant = (8 * 16 + 8 * 96 + 8 * 16 + 96 + 8) * 4 + 5 * 64;
  EXPECT_GT(r->peak_scratch, 0);
  EXPECT_LE(r->peak_scratch, packed + 64 + 8 * per_participant);
  EXPECT_LT(r->peak_scratch, 8 * 4 * 96 * 96 * 4);
  // Peak memory: the output plus the scratch, nothing else.
  EXPECT_LE(r->allocation.peak_bytes, r->peak_scratch + 96 * 4 * 16 * 4 + 4096);
}

// A cancelled run stops between blocks and reports Cancelled, serial threshold or not
// being irrelevant once the parallel path is forced.
TEST(Attention, CancelledRunReturnsCancelled) {
  AttentionCase c;
  c.q_seq = 32;
  c.kv_seq = 32;
  Inputs in;
  KernelTester t = MakeTester(c, &in);
  t.Tuning(param::kMinimumMultiplyAdds, int64_t{1}).Tuning("algorithm.query_tile_rows", int64_t{8});
  CancellationToken cancel;
  cancel.Cancel();
  for (int threads : {2, 4}) EXPECT_EQ(t.RunWithDetails(threads, &cancel).status().code(), StatusCode::kCancelled);
}

// FlexAttention without modifier graphs is plain rank-4 attention (GQA, scale).
TEST(FlexAttention, MatchesNaiveReferenceForEveryParticipantCount) {
  for (DataType type : {DataType::kFloat, DataType::kFloat16, DataType::kDouble}) {
    AttentionCase c;
    c.q_heads = 6;
    c.kv_heads = 2;
    c.q_seq = 9;
    c.kv_seq = 7;
    c.head = 12;
    c.v_head = 5;
    c.type = type;
    c.scale = 0.3f;
    Inputs in;
    KernelTester attention = MakeTester(c, &in);  // for the rounded inputs
    KernelTester t("FlexAttention", 1, "ai.onnx.preview");
    auto tensor = [&](std::vector<double>* v, int64_t heads, int64_t seq, int64_t d) {
      return MakeFloatTensor(type, Shape{c.batch, heads, seq, d}, v);
    };
    t.Input(tensor(&in.q, c.q_heads, c.q_seq, c.head)).Input(tensor(&in.k, c.kv_heads, c.kv_seq, c.head));
    t.Input(tensor(&in.v, c.kv_heads, c.kv_seq, c.v_head)).Attr("scale", *c.scale);
    auto serial = t.Run(1);
    ASSERT_TRUE(serial.ok()) << serial.status().ToString();
    ExpectNear(NaiveAttention(c, in).y, serial->at(0).tensor(), ToleranceFor(type), "FlexAttention Y");
    t.Tuning(param::kMinimumMultiplyAdds, int64_t{1});
    const std::vector<Value> forced = testing::DeterministicOutputs(t);
    ASSERT_FALSE(forced.empty());
    ExpectIdentical(serial->at(0), forced.at(0), "FlexAttention on the forced parallel path");
  }
}

TEST(FlexAttention, RejectsBadInputs) {
  auto f = [](Shape s) {
    std::vector<double> v = RandomValues(s.num_elements(), 1);
    return MakeFloatTensor(DataType::kFloat, s, &v);
  };
  KernelTester t("FlexAttention", 1, "ai.onnx.preview");
  t.Input(f({1, 3, 2, 4})).Input(f({1, 2, 5, 4})).Input(f({1, 2, 5, 4}));  // 3 query heads, 2 kv heads
  EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  KernelTester rank3("FlexAttention", 1, "ai.onnx.preview");
  rank3.Input(f({1, 2, 4})).Input(f({1, 5, 4})).Input(f({1, 5, 4}));
  EXPECT_EQ(rank3.Run(1).status().code(), StatusCode::kInvalidArgument);
}

TEST(Attention, RejectsBadInputs) {
  auto f = [](Shape s) {
    std::vector<double> v = RandomValues(s.num_elements(), 1);
    return MakeFloatTensor(DataType::kFloat, s, &v);
  };
  {  // mixed ranks
    KernelTester t("Attention", 23);
    t.Input(f({1, 2, 3, 4})).Input(f({1, 3, 8})).Input(f({1, 3, 8}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // 3-D without head counts
    KernelTester t("Attention", 23);
    t.Input(f({1, 3, 8})).Input(f({1, 3, 8})).Input(f({1, 3, 8}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // query heads not a multiple of kv heads
    KernelTester t("Attention", 23);
    t.Input(f({1, 3, 2, 4})).Input(f({1, 2, 2, 4})).Input(f({1, 2, 2, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // mask that does not broadcast
    KernelTester t("Attention", 23);
    t.Input(f({1, 2, 3, 4})).Input(f({1, 2, 5, 4})).Input(f({1, 2, 5, 4})).Input(f({2, 5}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // mask longer than the keys
    KernelTester t("Attention", 23);
    t.Input(f({1, 2, 3, 4})).Input(f({1, 2, 5, 4})).Input(f({1, 2, 5, 4})).Input(f({3, 6}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // past_key without past_value
    KernelTester t("Attention", 23);
    t.Input(f({1, 2, 3, 4})).Input(f({1, 2, 5, 4})).Input(f({1, 2, 5, 4})).MissingInput().Input(f({1, 2, 2, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // nonpad_kv_seqlen beyond the keys
    KernelTester t("Attention", 24);
    t.Input(f({2, 2, 3, 4})).Input(f({2, 2, 5, 4})).Input(f({2, 2, 5, 4})).MissingInput().MissingInput().MissingInput();
    t.Input(MakeTensor<int64_t>(Shape{2}, {3, 6}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // head counts on 4-D inputs (opset 25)
    KernelTester t("Attention", 25);
    t.Input(f({1, 2, 3, 4})).Input(f({1, 2, 5, 4})).Input(f({1, 2, 5, 4})).Attr("q_num_heads", int64_t{2});
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // Q and K of different types
    std::vector<double> v = RandomValues(40, 2);
    KernelTester t("Attention", 23);
    t.Input(f({1, 2, 5, 4})).Input(MakeFloatTensor(DataType::kDouble, Shape{1, 2, 5, 4}, &v)).Input(f({1, 2, 5, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // qk_matmul_output_mode out of range
    KernelTester t("Attention", 23);
    t.Input(f({1, 2, 3, 4})).Input(f({1, 2, 5, 4})).Input(f({1, 2, 5, 4})).Attr("qk_matmul_output_mode", int64_t{4});
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace onnx_light
