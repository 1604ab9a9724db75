// RNN, GRU and LSTM against a naive double-precision recurrence written from the ONNX
// equations, and identical results for 1, 2, 4 and 8 participants.
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

struct RecurrentCase {
  std::string name;
  std::string op = "LSTM";
  std::string direction = "forward";
  int opset = 22;
  int64_t seq = 4, batch = 3, input = 5, hidden = 6;
  bool layout = false, bias = true, initial = true, peepholes = false, lengths = false;
  bool linear_before_reset = false, input_forget = false;
  float clip = 0;
  std::vector<std::string> activations;  // empty: defaults
  DataType type = DataType::kFloat;
  bool constant_weights = false;            // W and R seen at creation (packed there)
  int64_t hidden_block = 0, row_block = 0;  // tuning: step tasks' blocks (0: default)
};

void PrintTo(const RecurrentCase& c, std::ostream* os) { *os << c.name; }

int Gates(const std::string& op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

double Apply(const std::string& f, double x) {
  if (f == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (f == "Tanh") return std::tanh(x);
  if (f == "Relu") return std::max(0.0, x);
  if (f == "HardSigmoid") return std::max(0.0, std::min(1.0, 0.2 * x + 0.5));
  if (f == "Softsign") return x / (1 + std::fabs(x));
  ADD_FAILURE() << "no reference for " << f;
  return x;
}

struct Expected {
  std::vector<double> y, y_h, y_c;  // (seq, dirs, batch, hidden) and (dirs, batch, hidden)
};

Expected Naive(const RecurrentCase& c, const std::vector<double>& x, const std::vector<double>& w,
               const std::vector<double>& r, const std::vector<double>& b, const std::vector<double>& h0,
               const std::vector<double>& c0, const std::vector<double>& p, const std::vector<int32_t>& lens) {
  const int64_t nd = c.direction == "bidirectional" ? 2 : 1, g = Gates(c.op), H = c.hidden, I = c.input;
  std::vector<std::string> acts = c.activations;
  if (acts.empty()) {
    for (int64_t d = 0; d < nd; ++d) {
      if (c.op == "RNN") acts.insert(acts.end(), {"Tanh"});
      if (c.op == "GRU") acts.insert(acts.end(), {"Sigmoid", "Tanh"});
      if (c.op == "LSTM") acts.insert(acts.end(), {"Sigmoid", "Tanh", "Tanh"});
    }
  }
  const size_t per_dir = acts.size() / nd;
  auto clip = [&](double v) { return c.clip > 0 ? std::max<double>(-c.clip, std::min<double>(c.clip, v)) : v; };
  Expected e;
  e.y.assign(c.seq * nd * c.batch * H, 0.0);
  e.y_h.assign(nd * c.batch * H, 0.0);
  e.y_c.assign(nd * c.batch * H, 0.0);
  for (int64_t d = 0; d < nd; ++d)
    for (int64_t bb = 0; bb < c.batch; ++bb) {
      std::vector<double> h(H), cell(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0[(d * c.batch + bb) * H + j];
        cell[j] = c0[(d * c.batch + bb) * H + j];
      }
      const int64_t len = c.lengths ? lens[bb] : c.seq;
      const bool reverse = c.direction == "reverse" || d == 1;
      auto f = [&](int k, double v) { return Apply(acts[d * per_dir + k], v); };
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = reverse ? len - 1 - s : s;
        // pre[k][j]: input part and recurrent part of gate k, row j, with their biases.
        auto wx = [&](int64_t k, int64_t j) {
          double v = b[d * 2 * g * H + k * H + j];
          for (int64_t i = 0; i < I; ++i) v += w[((d * g + k) * H + j) * I + i] * x[(t * c.batch + bb) * I + i];
          return v;
        };
        auto rh = [&](int64_t k, int64_t j, const std::vector<double>& state) {
          double v = b[d * 2 * g * H + g * H + k * H + j];
          for (int64_t i = 0; i < H; ++i) v += r[((d * g + k) * H + j) * H + i] * state[i];
          return v;
        };
        std::vector<double> nh(H), nc(H);
        for (int64_t j = 0; j < H; ++j) {
          if (c.op == "RNN") nh[j] = f(0, clip(wx(0, j) + rh(0, j, h)));
        }
        if (c.op == "GRU") {
          std::vector<double> z(H), rr(H), reset_h(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = f(0, clip(wx(0, j) + rh(0, j, h)));
            rr[j] = f(0, clip(wx(1, j) + rh(1, j, h)));
            reset_h[j] = rr[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            const double pre = c.linear_before_reset ? wx(2, j) + rr[j] * rh(2, j, h) : wx(2, j) + rh(2, j, reset_h);
            nh[j] = (1 - z[j]) * f(1, clip(pre)) + z[j] * h[j];
          }
        }
        if (c.op == "LSTM") {
          auto peep = [&](int k, int64_t j) { return c.peepholes ? p[d * 3 * H + k * H + j] : 0.0; };
          for (int64_t j = 0; j < H; ++j) {
            const double i_gate = f(0, clip(wx(0, j) + rh(0, j, h) + peep(0, j) * cell[j]));
            const double f_gate =
                c.input_forget ? 1 - i_gate : f(0, clip(wx(2, j) + rh(2, j, h) + peep(2, j) * cell[j]));
            nc[j] = f_gate * cell[j] + i_gate * f(1, clip(wx(3, j) + rh(3, j, h)));
            const double o_gate = f(0, clip(wx(1, j) + rh(1, j, h) + peep(1, j) * nc[j]));
            nh[j] = o_gate * f(2, nc[j]);
          }
          cell = nc;
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j) e.y[((t * nd + d) * c.batch + bb) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        e.y_h[(d * c.batch + bb) * H + j] = h[j];
        e.y_c[(d * c.batch + bb) * H + j] = cell[j];
      }
    }
  return e;
}

// (seq, batch, ...) <-> (batch, seq, ...) for layout 1; dims a x b x inner.
std::vector<double> SwapLeading(const std::vector<double>& v, int64_t a, int64_t b, int64_t inner) {
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < inner; ++k) out[(j * a + i) * inner + k] = v[(i * b + j) * inner + k];
  return out;
}

class RecurrentCases : public ::testing::TestWithParam<RecurrentCase> {};

TEST_P(RecurrentCases, MatchesNaiveRecurrenceForEveryParticipantCount) {
  const RecurrentCase& c = GetParam();
  const int64_t nd = c.direction == "bidirectional" ? 2 : 1, g = Gates(c.op), H = c.hidden;
  std::vector<double> x = RandomValues(c.seq * c.batch * c.input, 1),
                      w = RandomValues(nd * g * H * c.input, 2, -0.6, 0.6);
  std::vector<double> r = RandomValues(nd * g * H * H, 3, -0.6, 0.6), b = RandomValues(nd * 2 * g * H, 4);
  std::vector<double> h0 = RandomValues(nd * c.batch * H, 5), c0 = RandomValues(nd * c.batch * H, 6);
  std::vector<double> p = RandomValues(nd * 3 * H, 7);
  std::vector<int32_t> lens(c.batch);
  for (int64_t i = 0; i < c.batch; ++i) lens[i] = static_cast<int32_t>((i * 3 + 1) % (c.seq + 1));
  if (!c.bias) std::fill(b.begin(), b.end(), 0.0);
  if (!c.initial) std::fill(h0.begin(), h0.end(), 0.0), std::fill(c0.begin(), c0.end(), 0.0);

  KernelTester t(c.op, c.opset);
  std::vector<double> x_layout = c.layout ? SwapLeading(x, c.seq, c.batch, c.input) : x;
  t.Input(
      MakeFloatTensor(c.type, c.layout ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input}, &x_layout));
  x = c.layout ? SwapLeading(x_layout, c.batch, c.seq, c.input) : x_layout;
  if (c.constant_weights) {
    t.ConstantInput(MakeFloatTensor(c.type, Shape{nd, g * H, c.input}, &w))
        .ConstantInput(MakeFloatTensor(c.type, Shape{nd, g * H, H}, &r));
  } else {
    t.Input(MakeFloatTensor(c.type, Shape{nd, g * H, c.input}, &w))
        .Input(MakeFloatTensor(c.type, Shape{nd, g * H, H}, &r));
  }
  if (c.hidden_block > 0) t.Tuning(param::kBlockHiddenUnits, c.hidden_block);
  if (c.row_block > 0) t.Tuning(param::kBlockRows, c.row_block);
  const Shape state = c.layout ? Shape{c.batch, nd, H} : Shape{nd, c.batch, H};
  auto state_tensor = [&](std::vector<double>* v) {
    std::vector<double> l = c.layout ? SwapLeading(*v, nd, c.batch, H) : *v;
    Tensor tensor = MakeFloatTensor(c.type, state, &l);
    *v = c.layout ? SwapLeading(l, c.batch, nd, H) : l;
    return tensor;
  };
  if (c.bias)
    t.Input(MakeFloatTensor(c.type, Shape{nd, 2 * g * H}, &b));
  else
    t.MissingInput();
  if (c.lengths)
    t.Input(MakeTensor<int32_t>(Shape{c.batch}, lens));
  else
    t.MissingInput();
  if (c.initial)
    t.Input(state_tensor(&h0));
  else
    t.MissingInput();
  if (c.op == "LSTM") {
    if (c.initial)
      t.Input(state_tensor(&c0));
    else
      t.MissingInput();
    if (c.peepholes) t.Input(MakeFloatTensor(c.type, Shape{nd, 3 * H}, &p));
  }
  t.Attr("hidden_size", H).Attr("direction", c.direction).Outputs(c.op == "LSTM" ? 3 : 2);
  if (c.layout) t.Attr("layout", int64_t{1});
  if (c.clip > 0) t.Attr("clip", c.clip);
  if (c.linear_before_reset) t.Attr("linear_before_reset", int64_t{1});
  if (c.input_forget) t.Attr("input_forget", int64_t{1});
  if (!c.activations.empty()) t.Attr("activations", c.activations);

  Expected e = Naive(c, x, w, r, b, h0, c0, p, lens);
  if (c.layout) {
    std::vector<double> y(e.y.size());
    for (int64_t s = 0; s < c.seq; ++s)
      for (int64_t d = 0; d < nd; ++d)
        for (int64_t bb = 0; bb < c.batch; ++bb)
          for (int64_t j = 0; j < H; ++j)
            y[((bb * c.seq + s) * nd + d) * H + j] = e.y[((s * nd + d) * c.batch + bb) * H + j];
    e.y = y;
    e.y_h = SwapLeading(e.y_h, nd, c.batch, H);
    e.y_c = SwapLeading(e.y_c, nd, c.batch, H);
  }
  auto serial = t.Run(1);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  const double tol = ToleranceFor(c.type);
  ExpectNear(e.y, serial->at(0).tensor(), tol, c.name + " Y");
  ExpectNear(e.y_h, serial->at(1).tensor(), tol, c.name + " Y_h");
  if (c.op == "LSTM") ExpectNear(e.y_c, serial->at(2).tensor(), tol, c.name + " Y_c");
  t.Tuning(param::kMinimumMultiplyAdds, int64_t{1});
  const std::vector<Value> forced = testing::DeterministicOutputs(t);
  ASSERT_EQ(forced.size(), serial->size());
  for (size_t o = 0; o < serial->size(); ++o) {
    ExpectIdentical(serial->at(o), forced[o], c.name + " output " + std::to_string(o) + " on the forced parallel path");
  }
}

std::vector<RecurrentCase> Cases() {
  std::vector<RecurrentCase> cases;
  auto add = [&](std::string name, auto edit) {
    RecurrentCase c;
    c.name = std::move(name);
    edit(c);
    cases.push_back(c);
  };
  add("rnn_forward", [](RecurrentCase& c) { c.op = "RNN"; });
  add("rnn_reverse_relu_lengths", [](RecurrentCase& c) {
    c.op = "RNN";
    c.direction = "reverse";
    c.activations = {"Relu"};
    c.lengths = true;
  });
  add("rnn_bidirectional_layout1_opset14", [](RecurrentCase& c) {
    c.op = "RNN";
    c.direction = "bidirectional";
    c.layout = true;
    c.opset = 14;
    c.activations = {"Tanh", "Softsign"};
  });
  add("gru_forward", [](RecurrentCase& c) { c.op = "GRU"; });
  add("gru_linear_before_reset_bidirectional", [](RecurrentCase& c) {
    c.op = "GRU";
    c.linear_before_reset = true;
    c.direction = "bidirectional";
    c.lengths = true;
  });
  add("gru_clip_no_bias_opset7", [](RecurrentCase& c) {
    c.op = "GRU";
    c.clip = 0.5f;
    c.bias = false;
    c.initial = false;
    c.opset = 7;
  });
  add("lstm_forward", [](RecurrentCase&) {});
  add("lstm_peepholes_lengths", [](RecurrentCase& c) {
    c.peepholes = true;
    c.lengths = true;
  });
  add("lstm_bidirectional_layout1", [](RecurrentCase& c) {
    c.direction = "bidirectional";
    c.layout = true;
    c.peepholes = true;
  });
  add("lstm_input_forget_activations", [](RecurrentCase& c) {
    c.input_forget = true;
    c.activations = {"HardSigmoid", "Tanh", "Softsign"};
    c.clip = 1.0f;
  });
  add("lstm_reverse_seq_1_batch_1", [](RecurrentCase& c) {
    c.direction = "reverse";
    c.seq = 1;
    c.batch = 1;
  });
  add("lstm_batch_0", [](RecurrentCase& c) { c.batch = 0; });
  add("lstm_float16", [](RecurrentCase& c) {
    c.type = DataType::kFloat16;
    c.peepholes = true;
  });
  add("gru_double", [](RecurrentCase& c) {
    c.op = "GRU";
    c.type = DataType::kDouble;
    c.direction = "bidirectional";
  });
  add("rnn_bfloat16", [](RecurrentCase& c) {
    c.op = "RNN";
    c.type = DataType::kBFloat16;
  });
  // The step as several tasks: hidden-unit blocks (uneven: 6 = 4 + 2) and row blocks.
  add("lstm_bidirectional_blocks_lengths_constant", [](RecurrentCase& c) {
    c.direction = "bidirectional";
    c.peepholes = true;
    c.lengths = true;
    c.constant_weights = true;
    c.hidden_block = 4;
    c.row_block = 2;
  });
  add("gru_reverse_blocks_layout1", [](RecurrentCase& c) {
    c.op = "GRU";
    c.direction = "reverse";
    c.layout = true;
    c.hidden_block = 4;
    c.row_block = 1;
    c.lengths = true;
  });
  add("gru_linear_before_reset_blocks_constant", [](RecurrentCase& c) {
    c.op = "GRU";
    c.linear_before_reset = true;
    c.constant_weights = true;
    c.hidden_block = 1;
    c.clip = 0.7f;
  });
  add("rnn_bidirectional_blocks_constant_float16", [](RecurrentCase& c) {
    c.op = "RNN";
    c.direction = "bidirectional";
    c.type = DataType::kFloat16;
    c.constant_weights = true;
    c.hidden_block = 5;
  });
  add("lstm_double_blocks", [](RecurrentCase& c) {
    c.type = DataType::kDouble;
    c.hidden_block = 4;
    c.row_block = 2;
    c.lengths = true;
  });
  add("lstm_hidden_40_batch_1", [](RecurrentCase& c) {  // rows over full SIMD vectors and a tail
    c.hidden = 40;
    c.batch = 1;
    c.seq = 3;
    c.constant_weights = true;
  });
  // The step's product by batch rows: 2-8 rows on the step panels (6 = a pass of 4 and one
  // of 2 on AVX-512; 4 x 40 gate columns = five panels, the last partial), more on the GEMM.
  add("lstm_batch_6_hidden_40_step_panels", [](RecurrentCase& c) {
    c.hidden = 40;
    c.batch = 6;
    c.peepholes = true;
    c.constant_weights = true;
  });
  add("gru_bidirectional_batch_6_hidden_40_step_panels", [](RecurrentCase& c) {
    c.op = "GRU";
    c.direction = "bidirectional";
    c.hidden = 40;
    c.batch = 6;
    c.lengths = true;
  });
  add("lstm_batch_11_gemm_step", [](RecurrentCase& c) {
    c.batch = 11;
    c.hidden = 9;
    c.lengths = true;
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Recurrent, RecurrentCases, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<RecurrentCase>& info) { return info.param.name; });

TEST(Recurrent, RejectsBadInputs) {
  auto f = [](Shape s) {
    std::vector<double> v = RandomValues(s.num_elements(), 1);
    return MakeFloatTensor(DataType::kFloat, s, &v);
  };
  {  // W with the wrong gate count for LSTM
    KernelTester t("LSTM", 22);
    t.Input(f({2, 1, 3})).Input(f({1, 12, 3})).Input(f({1, 12, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // sequence length beyond seq
    KernelTester t("RNN", 22);
    t.Input(f({2, 1, 3}))
        .Input(f({1, 4, 3}))
        .Input(f({1, 4, 4}))
        .MissingInput()
        .Input(MakeTensor<int32_t>(Shape{1}, {3}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // unknown activation
    KernelTester t("RNN", 22);
    t.Input(f({2, 1, 3}))
        .Input(f({1, 4, 3}))
        .Input(f({1, 4, 4}))
        .Attr("activations", std::vector<std::string>{"Swish"});
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
  {  // bidirectional weights for a forward node
    KernelTester t("GRU", 22);
    t.Input(f({2, 1, 3})).Input(f({2, 12, 3})).Input(f({2, 12, 4}));
    EXPECT_EQ(t.Run(1).status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace onnx_light
