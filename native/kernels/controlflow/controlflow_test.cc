// If, Loop and Scan run through a real Session (they need its subgraph runner); bodies use
// the session's test-only TestAdd kernel, so expectations are plain sums.
#include <chrono>

#include <gtest/gtest.h>

#include "native/session/session.h"

namespace onnx_light {
namespace {

ValueInfo Info(const std::string& name, DataType type, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeDescription::Kind::kTensor;
  v.type.element_type = type;
  v.has_shape = true;
  v.dims = std::move(dims);
  return v;
}

Node MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
              const std::string& domain = "") {
  Node n;
  n.op = op;
  n.domain = domain;
  n.name = op + "_" + outputs[0];
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

Node Add(const std::string& a, const std::string& b, const std::string& out) {
  return MakeNode("TestAdd", {a, b}, {out}, "test.session");
}

void SetGraph(Node& node, const std::string& name, std::shared_ptr<const Graph> g) {
  Attribute a;
  a.name = name;
  a.type = Attribute::Type::kGraph;
  a.g = std::move(g);
  node.attributes[name] = a;
}

void SetInts(Node& node, const std::string& name, std::vector<int64_t> values) {
  Attribute a;
  a.name = name;
  a.type = Attribute::Type::kInts;
  a.ints = std::move(values);
  node.attributes[name] = a;
}

void SetInt(Node& node, const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = Attribute::Type::kInt;
  a.i = value;
  node.attributes[name] = a;
}

std::shared_ptr<Graph> NewGraph(const std::string& name, int opset = 21) {
  auto g = std::make_shared<Graph>();
  g->name = name;
  g->opset_imports[""] = opset;
  g->opset_imports["test.session"] = 1;
  return g;
}

template <typename T>
Tensor Make(Shape shape, std::vector<T> values) {
  auto t = Tensor::Allocate(kDataTypeOf<T>, std::move(shape), Allocator::Default());
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < values.size(); ++i) t->template data<T>()[i] = values[i];
  return *t;
}

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

StatusOr<std::vector<Value>> RunOnce(std::shared_ptr<const Graph> g, std::vector<std::pair<std::string, Value>> feeds,
                                     int threads = 1, const RunOptions& options = {}) {
  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  OL_ASSIGN_OR_RETURN(auto session, Session::Create(std::move(g), policy));
  return session->Run(feeds, {}, options);
}

// y = cond ? x + x : x + (x + x), both branches reading x from the outer scope.
TEST(IfTest, RunsTheChosenBranchWithOuterScopeValues) {
  auto then_branch = NewGraph("then");
  then_branch->nodes.push_back(Add("x", "x", "t"));
  then_branch->outputs.push_back(Info("t", DataType::kFloat, {2}));
  auto else_branch = NewGraph("else");
  else_branch->nodes.push_back(Add("x", "x", "e1"));
  else_branch->nodes.push_back(Add("x", "e1", "e2"));
  else_branch->outputs.push_back(Info("e2", DataType::kFloat, {2}));

  auto g = NewGraph("main");
  g->inputs.push_back(Info("cond", DataType::kBool, {}));
  g->inputs.push_back(Info("x", DataType::kFloat, {2}));
  Node node = MakeNode("If", {"cond"}, {"y"});
  SetGraph(node, "then_branch", then_branch);
  SetGraph(node, "else_branch", else_branch);
  g->nodes.push_back(node);
  g->outputs.push_back(Info("y", DataType::kFloat, {2}));

  for (bool cond : {true, false}) {
    for (int threads : {1, 2}) {
      auto out = RunOnce(g, {{"cond", Value(Make<bool>({}, {cond}))}, {"x", Value(Make<float>({2}, {1, 2}))}}, threads);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(Floats((*out)[0]), cond ? std::vector<float>({2, 4}) : std::vector<float>({3, 6}));
    }
  }
  auto wrong = RunOnce(g, {{"cond", Value(Make<bool>({2}, {true, false}))}, {"x", Value(Make<float>({2}, {1, 2}))}});
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
}

// Loop body: s' = s + x (x from the outer scope), cond passes through, scan output s'.
std::shared_ptr<Graph> AccumulatingLoop(bool with_trip_count) {
  auto body = NewGraph("body");
  body->inputs.push_back(Info("i", DataType::kInt64, {}));
  body->inputs.push_back(Info("c", DataType::kBool, {}));
  body->inputs.push_back(Info("s", DataType::kFloat, {2}));
  body->nodes.push_back(Add("s", "x", "s2"));
  body->outputs.push_back(Info("c", DataType::kBool, {}));
  body->outputs.push_back(Info("s2", DataType::kFloat, {2}));
  body->outputs.push_back(Info("s2", DataType::kFloat, {2}));

  auto g = NewGraph("main");
  if (with_trip_count) g->inputs.push_back(Info("M", DataType::kInt64, {}));
  g->inputs.push_back(Info("cond", DataType::kBool, {}));
  g->inputs.push_back(Info("s0", DataType::kFloat, {2}));
  g->inputs.push_back(Info("x", DataType::kFloat, {2}));
  Node loop = MakeNode("Loop", {with_trip_count ? "M" : "", "cond", "s0"}, {"final", "all"});
  SetGraph(loop, "body", body);
  g->nodes.push_back(loop);
  g->outputs.push_back(Info("final", DataType::kFloat, {2}));
  g->outputs.push_back(Info("all", DataType::kFloat, {-1, 2}));
  return g;
}

TEST(LoopTest, CarriesStateAndStacksScanOutputs) {
  auto g = AccumulatingLoop(true);
  auto out = RunOnce(g, {{"M", Value(Make<int64_t>({}, {3}))},
                         {"cond", Value(Make<bool>({}, {true}))},
                         {"s0", Value(Make<float>({2}, {10, 20}))},
                         {"x", Value(Make<float>({2}, {1, 2}))}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Floats((*out)[0]), std::vector<float>({13, 26}));
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({3, 2}));
  EXPECT_EQ(Floats((*out)[1]), std::vector<float>({11, 22, 12, 24, 13, 26}));
}

// Forces every tunable kernel onto its parallel path.
class ParallelEverywhere : public TuningSource {
 public:
  ResolvedTuning Resolve(std::shared_ptr<const KernelTuningSchema> schema) const override {
    ResolvedTuning r = ResolvedTuning::Defaults(schema);
    EXPECT_TRUE(r.Set(param::kMinimumElements, int64_t{1}, ValueSource::kExplicitProfile).ok());
    return r;
  }
};

TEST(LoopTest, BodiesRunOnTheSessionExecutor) {
  CpuExecutionPolicy policy;
  policy.num_threads = 2;
  policy.spin_microseconds = 0;
  auto session = Session::Create(AccumulatingLoop(true), policy, std::make_shared<ParallelEverywhere>());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EventCollector events;
  RunOptions options;
  options.events = &events;
  auto out = (*session)->Run({{"M", Value(Make<int64_t>({}, {3}))},
                              {"cond", Value(Make<bool>({}, {true}))},
                              {"s0", Value(Make<float>({2}, {0, 0}))},
                              {"x", Value(Make<float>({2}, {1, 2}))}},
                             {}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Floats((*out)[0]), std::vector<float>({3, 6}));
  // One region per iteration, offered the session executor's two participants (not a
  // second pool, and not nested: the Loop kernel itself runs outside any region).
  const auto regions = events.regions();
  ASSERT_EQ(regions.size(), 3u);
  for (const RegionEvent& r : regions) {
    EXPECT_EQ(r.requested_participants, 2);
    EXPECT_FALSE(r.nested);
  }
  // Node events: the Loop and the three body runs of TestAdd.
  EXPECT_EQ(events.nodes().size(), 4u);
  EXPECT_EQ(ExecutorRegistry::Global().LiveExecutors(), 1);
}

TEST(LoopTest, ZeroIterationsGiveTheInitialStateAndEmptyScanOutputs) {
  auto g = AccumulatingLoop(true);
  auto out = RunOnce(g, {{"M", Value(Make<int64_t>({}, {0}))},
                         {"cond", Value(Make<bool>({}, {true}))},
                         {"s0", Value(Make<float>({2}, {10, 20}))},
                         {"x", Value(Make<float>({2}, {1, 2}))}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Floats((*out)[0]), std::vector<float>({10, 20}));
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({0, 2}));
  EXPECT_EQ((*out)[1].tensor().dtype(), DataType::kFloat);
}

TEST(LoopTest, AnEndlessLoopStopsAtTheTimeout) {
  auto g = AccumulatingLoop(false);  // no trip count, cond always true
  CancellationToken token;
  token.SetDeadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  RunOptions options;
  options.cancellation = &token;
  auto out = RunOnce(g,
                     {{"cond", Value(Make<bool>({}, {true}))},
                      {"s0", Value(Make<float>({2}, {0, 0}))},
                      {"x", Value(Make<float>({2}, {1, 1}))}},
                     1, options);
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled) << out.status().ToString();
  EXPECT_NE(out.status().message().find("timeout"), std::string::npos) << out.status().message();
}

// Scan body: s' = s + x_t, output s'.
std::shared_ptr<Graph> CumulativeSumBody() {
  auto body = NewGraph("body");
  body->inputs.push_back(Info("s", DataType::kFloat, {2}));
  body->inputs.push_back(Info("xt", DataType::kFloat, {2}));
  body->nodes.push_back(Add("s", "xt", "s2"));
  body->outputs.push_back(Info("s2", DataType::kFloat, {2}));
  body->outputs.push_back(Info("s2", DataType::kFloat, {2}));
  return body;
}

std::shared_ptr<Graph> ScanGraph(std::vector<int64_t> x_dims, std::vector<int64_t> input_axes,
                                 std::vector<int64_t> input_directions, std::vector<int64_t> output_directions) {
  auto g = NewGraph("main", 16);
  g->inputs.push_back(Info("s0", DataType::kFloat, {2}));
  g->inputs.push_back(Info("x", DataType::kFloat, x_dims));
  Node scan = MakeNode("Scan", {"s0", "x"}, {"final", "all"});
  SetGraph(scan, "body", CumulativeSumBody());
  SetInt(scan, "num_scan_inputs", 1);
  SetInts(scan, "scan_input_axes", input_axes);
  SetInts(scan, "scan_input_directions", input_directions);
  SetInts(scan, "scan_output_directions", output_directions);
  g->nodes.push_back(scan);
  g->outputs.push_back(Info("final", DataType::kFloat, {2}));
  g->outputs.push_back(Info("all", DataType::kFloat, {3, 2}));
  return g;
}

TEST(ScanTest, CumulativeSumForwardAndReversed) {
  const Tensor x = Make<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor zero = Make<float>({2}, {0, 0});
  auto forward = RunOnce(ScanGraph({3, 2}, {0}, {0}, {0}), {{"s0", Value(zero)}, {"x", Value(x)}});
  ASSERT_TRUE(forward.ok()) << forward.status().ToString();
  EXPECT_EQ(Floats((*forward)[0]), std::vector<float>({9, 12}));
  EXPECT_EQ(Floats((*forward)[1]), std::vector<float>({1, 2, 4, 6, 9, 12}));

  // Reading backwards and writing backwards: the reversed suffix sums, in input order.
  auto reversed = RunOnce(ScanGraph({3, 2}, {0}, {1}, {1}), {{"s0", Value(zero)}, {"x", Value(x)}});
  ASSERT_TRUE(reversed.ok()) << reversed.status().ToString();
  EXPECT_EQ(Floats((*reversed)[1]), std::vector<float>({9, 12, 8, 10, 5, 6}));
}

TEST(ScanTest, ScansAlongAnotherAxis) {
  // x is [2, 3]: scanning axis 1 (negative: -1) sees columns (1, 4), (2, 5), (3, 6).
  const Tensor x = Make<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOnce(ScanGraph({2, 3}, {-1}, {0}, {0}), {{"s0", Value(Make<float>({2}, {0, 0}))}, {"x", Value(x)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Floats((*out)[1]), std::vector<float>({1, 4, 3, 9, 6, 15}));
}

TEST(ScanTest, Opset8ScansEachBatchItem) {
  auto g = NewGraph("main", 8);
  g->inputs.push_back(Info("s0", DataType::kFloat, {2, 2}));
  g->inputs.push_back(Info("x", DataType::kFloat, {2, 3, 2}));
  Node scan = MakeNode("Scan", {"", "s0", "x"}, {"final", "all"});
  SetGraph(scan, "body", CumulativeSumBody());
  SetInt(scan, "num_scan_inputs", 1);
  g->nodes.push_back(scan);
  g->outputs.push_back(Info("final", DataType::kFloat, {2, 2}));
  g->outputs.push_back(Info("all", DataType::kFloat, {2, 3, 2}));
  const Tensor x = Make<float>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60});
  auto out = RunOnce(g, {{"s0", Value(Make<float>({2, 2}, {0, 0, 100, 100}))}, {"x", Value(x)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Floats((*out)[0]), std::vector<float>({9, 12, 190, 220}));
  EXPECT_EQ(Floats((*out)[1]), std::vector<float>({1, 2, 4, 6, 9, 12, 110, 120, 140, 160, 190, 220}));
}

TEST(ScanTest, MismatchedSequenceLengthsAreRejected) {
  auto g = NewGraph("main", 16);
  g->inputs.push_back(Info("s0", DataType::kFloat, {2}));
  g->inputs.push_back(Info("x", DataType::kFloat, {3, 2}));
  g->inputs.push_back(Info("z", DataType::kFloat, {4, 2}));
  auto body = CumulativeSumBody();
  body->inputs.push_back(Info("zt", DataType::kFloat, {2}));
  Node scan = MakeNode("Scan", {"s0", "x", "z"}, {"final", "all"});
  SetGraph(scan, "body", body);
  SetInt(scan, "num_scan_inputs", 2);
  g->nodes.push_back(scan);
  g->outputs.push_back(Info("final", DataType::kFloat, {2}));
  g->outputs.push_back(Info("all", DataType::kFloat, {3, 2}));
  auto out = RunOnce(g, {{"s0", Value(Make<float>({2}, {0, 0}))},
                         {"x", Value(Make<float>({3, 2}, {1, 2, 3, 4, 5, 6}))},
                         {"z", Value(Make<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))}});
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("sequence length: 3 vs 4"), std::string::npos) << out.status().message();
}

// SequenceMap body: y = s + t, with s from the sequence and t either a matching sequence
// element or a tensor passed to every iteration.
TEST(SequenceMapTest, PairsSequenceElementsAndBroadcastsTensors) {
  auto body = NewGraph("body");
  body->inputs.push_back(Info("s", DataType::kFloat, {2}));
  body->inputs.push_back(Info("t", DataType::kFloat, {2}));
  body->nodes.push_back(Add("s", "t", "y"));
  body->outputs.push_back(Info("y", DataType::kFloat, {2}));
  auto g = NewGraph("main", 17);
  Node map = MakeNode("SequenceMap", {"seq", "other"}, {"out"});
  SetGraph(map, "body", body);
  g->nodes.push_back(map);
  ValueInfo seq;
  seq.name = "seq";
  seq.type.kind = TypeDescription::Kind::kSequence;
  g->inputs.push_back(seq);
  seq.name = "other";
  g->inputs.push_back(seq);
  seq.name = "out";
  g->outputs.push_back(seq);

  const Value items = Value::Sequence({Value(Make<float>({2}, {1, 2})), Value(Make<float>({2}, {3, 4}))});
  auto paired = RunOnce(g, {{"seq", items}, {"other", items}});
  ASSERT_TRUE(paired.ok()) << paired.status().ToString();
  ASSERT_EQ((*paired)[0].items().size(), 2u);
  EXPECT_EQ(Floats((*paired)[0].items()[1]), std::vector<float>({6, 8}));

  g->inputs[1].type.kind = TypeDescription::Kind::kTensor;
  g->inputs[1].type.element_type = DataType::kFloat;
  auto broadcast = RunOnce(g, {{"seq", items}, {"other", Value(Make<float>({2}, {10, 20}))}});
  ASSERT_TRUE(broadcast.ok()) << broadcast.status().ToString();
  EXPECT_EQ(Floats((*broadcast)[0].items()[0]), std::vector<float>({11, 22}));
  EXPECT_EQ(Floats((*broadcast)[0].items()[1]), std::vector<float>({13, 24}));
}

}  // namespace
}  // namespace onnx_light
