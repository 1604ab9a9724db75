// Serial vs 2-participant latency of the batch-2 kernels (ReduceSum over the inner and
// the outer axis, Softmax rows x 1024, LayerNormalization rows x 768, MaxPool 3x3/2) over
// a size sweep from small through the crossover to large. A benchmark, not a test.
//
//   ./bazelw run --config=opt //benchmarks/reduce_norm:reduce_norm_bench -- [samples] [sweep|cost|attention]
//
// `attention` runs only the attention-row Softmax cases (BERT-base [1,12,128,128], ViT-B/16
// [1,12,197,197]) in the serial-cost format: the short-row case to profile, e.g.
//   ONNX_LIGHT_MAX_ISA=avx2 valgrind --tool=callgrind bazel-bin/benchmarks/reduce_norm/reduce_norm_bench 1 attention
//
// For every shape it prints the median latency of: serial (no executor), 2 participants
// with parallel.minimum_elements forced to 1 (the parallel path at every size, to find
// the crossover), and 2 participants with the portable defaults, sampled interleaved; the
// median and the minimum (the least disturbed sample on a shared machine), then the raw
// samples. Each sample is the mean of enough back-to-back runs to last about 2 ms.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "native/executor/cpu_executor.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

struct Case {
  std::string family, label;
  std::string op;
  int opset;
  std::vector<Tensor> inputs;
  AttributeMap attributes;
  int64_t work;  // input elements
};

Attribute IntsAttr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = Attribute::Type::kInts;
  a.ints = std::move(v);
  return a;
}
Tensor Filled(Shape shape) {
  Tensor t = *Tensor::Allocate(DataType::kFloat, shape, Allocator::Default());
  float* d = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) d[i] = std::sin(0.001f * static_cast<float>(i)) + 0.5f;
  return t;
}
Tensor Axes(std::vector<int64_t> axes) {
  Tensor t = *Tensor::Allocate(DataType::kInt64, Shape({static_cast<int64_t>(axes.size())}), Allocator::Default());
  std::copy(axes.begin(), axes.end(), t.data<int64_t>());
  return t;
}

class Runner {
 public:
  // threads = 1: serial; force_parallel: parallel.minimum_elements = 1.
  static std::unique_ptr<Runner> Create(const Case& c, int threads, bool force_parallel) {
    auto r = std::unique_ptr<Runner>(new Runner());
    r->case_ = &c;
    auto found = KernelRegistry::Global().Find("", c.op, c.opset, c.inputs[0].dtype());
    if (!found.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.label.c_str(), found.status().ToString().c_str());
      std::exit(1);
    }
    const KernelDef* def = *found;
    ResolvedTuning tuning = ResolvedTuning::Defaults(KernelRegistry::Global().SchemaFor(*def, c.inputs[0].dtype()));
    if (force_parallel) tuning.Set("parallel.minimum_elements", int64_t{1}, ValueSource::kExplicitProfile).IgnoreError();
    std::vector<DataType> types;
    for (const Tensor& t : c.inputs) types.push_back(t.dtype());
    KernelInfo info("", c.op, "bench", c.opset, &c.attributes, types, 1, tuning);
    auto made = def->factory(info);
    r->kernel_ = std::move(made).value();
    if (threads > 1) {
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      r->executor_ = *ExecutorRegistry::Global().Acquire(policy);
    }
    for (const Tensor& t : c.inputs) r->values_.emplace_back(t);
    for (const Value& v : r->values_) r->inputs_.push_back(&v);
    return r;
  }

  void RunOnce() {
    ParallelContext par{executor_.get(), nullptr, nullptr, case_->op.c_str()};
    KernelContext ctx(&case_->op, &node_, inputs_, 1, &allocator_, par);
    Status s = kernel_->Compute(ctx);
    if (!s.ok()) std::fprintf(stderr, "%s: %s\n", case_->label.c_str(), s.ToString().c_str());
  }

 private:
  const Case* case_ = nullptr;
  std::string node_ = "bench";
  std::unique_ptr<OpKernel> kernel_;
  std::shared_ptr<CpuExecutor> executor_;
  std::vector<Value> values_;
  std::vector<const Value*> inputs_;
  Allocator allocator_;
};

double NowMicros() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Iterations per sample so that one sample of `r` lasts about 2 ms.
int IterationsFor(Runner& r) {
  r.RunOnce();  // warm up (page faults, executor start)
  const double t0 = NowMicros();
  r.RunOnce();
  return std::max(1, static_cast<int>(2000.0 / std::max(0.05, NowMicros() - t0)));
}

// Samples of the three variants interleaved, so that they share the machine's conditions.
std::vector<std::vector<double>> SampleInterleaved(const std::vector<Runner*>& runners, int samples) {
  std::vector<int> iterations;
  for (Runner* r : runners) iterations.push_back(IterationsFor(*r));
  std::vector<std::vector<double>> out(runners.size());
  for (int s = 0; s < samples; ++s) {
    for (size_t v = 0; v < runners.size(); ++v) {
      const double start = NowMicros();
      for (int i = 0; i < iterations[v]; ++i) runners[v]->RunOnce();
      out[v].push_back((NowMicros() - start) / iterations[v]);
    }
  }
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

std::string Join(const std::vector<double>& v) {
  std::string s;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%s%.2f", s.empty() ? "" : " ", x);
    s += buf;
  }
  return s;
}

std::vector<Case> Corpus() {
  std::vector<Case> cases;
  for (int64_t rows : {1, 4, 16, 32, 64, 128, 512, 2048}) {
    cases.push_back({"ReduceSum inner", "[" + std::to_string(rows) + ",1024] axes=[1]", "ReduceSum", 13,
                     {Filled(Shape({rows, 1024})), Axes({1})}, {}, rows * 1024});
  }
  for (int64_t n : {4, 16, 64, 128, 256, 1024, 4096}) {
    cases.push_back({"ReduceSum outer", "[" + std::to_string(n) + ",256] axes=[0]", "ReduceSum", 13,
                     {Filled(Shape({n, 256})), Axes({0})}, {}, n * 256});
  }
  for (int64_t n : {16384, 65536, 262144, 1048576, 4194304}) {
    cases.push_back({"ReduceSum all", "[" + std::to_string(n) + "] axes=[]", "ReduceSum", 13,
                     {Filled(Shape({n}))}, {}, n});
  }
  for (int64_t rows : {1, 4, 8, 16, 32, 64, 256, 1024}) {
    cases.push_back({"Softmax", "[" + std::to_string(rows) + ",1024] axis=-1", "Softmax", 13,
                     {Filled(Shape({rows, 1024}))}, {}, rows * 1024});
  }
  for (int64_t rows : {1, 4, 16, 32, 64, 128, 512, 2048}) {
    Case c{"LayerNormalization", "[" + std::to_string(rows) + ",768] axis=-1", "LayerNormalization", 17,
           {Filled(Shape({rows, 768})), Filled(Shape({768})), Filled(Shape({768}))}, {}, rows * 768};
    cases.push_back(std::move(c));
  }
  for (int64_t channels : {1, 4, 8, 16, 32, 64, 256}) {
    AttributeMap attrs;
    attrs["kernel_shape"] = IntsAttr("kernel_shape", {3, 3});
    attrs["strides"] = IntsAttr("strides", {2, 2});
    attrs["pads"] = IntsAttr("pads", {1, 1, 1, 1});
    cases.push_back({"MaxPool", "[1," + std::to_string(channels) + ",56,56] k3 s2 p1", "MaxPool", 12,
                     {Filled(Shape({1, channels, 56, 56}))}, attrs, channels * 28 * 28 * 9});
  }
  return cases;
}

Attribute ScalarAttr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = Attribute::Type::kInt;
  a.i = v;
  return a;
}

Tensor Int64s(std::vector<int64_t> values) { return Axes(std::move(values)); }

// One large case per op: serial cost per work unit (the unit of the op's
// parallel.minimum_elements: input elements, or window taps for the pools).
std::vector<Case> CostCorpus() {
  std::vector<Case> cases;
  const Shape square({1024, 1024});
  cases.push_back({"cost", "ReduceSum [1024,1024] axes=[1]", "ReduceSum", 13, {Filled(square), Axes({1})}, {}, 1 << 20});
  cases.push_back({"cost", "ReduceMax [1024,1024] axes=[0]", "ReduceMax", 18, {Filled(square), Axes({0})}, {}, 1 << 20});
  cases.push_back({"cost", "ReduceLogSumExp [1024,1024] axes=[1]", "ReduceLogSumExp", 18, {Filled(square), Axes({1})}, {}, 1 << 20});
  cases.push_back({"cost", "ArgMax [1024,1024] axis=1", "ArgMax", 13, {Filled(square)}, {{"axis", ScalarAttr("axis", 1)}}, 1 << 20});
  cases.push_back({"cost", "Softmax [256,1024]", "Softmax", 13, {Filled(Shape({256, 1024}))}, {}, 256 * 1024});
  cases.push_back({"cost", "Hardmax [256,1024]", "Hardmax", 13, {Filled(Shape({256, 1024}))}, {}, 256 * 1024});
  cases.push_back({"cost", "LayerNormalization [512,768]", "LayerNormalization", 17,
                   {Filled(Shape({512, 768})), Filled(Shape({768})), Filled(Shape({768}))}, {}, 512 * 768});
  const Shape image({8, 64, 32, 32});
  cases.push_back({"cost", "BatchNormalization [8,64,32,32]", "BatchNormalization", 15,
                   {Filled(image), Filled(Shape({64})), Filled(Shape({64})), Filled(Shape({64})), Filled(Shape({64}))},
                   {}, 8 * 64 * 1024});
  cases.push_back({"cost", "GroupNormalization [8,64,32,32] g=8", "GroupNormalization", 21,
                   {Filled(image), Filled(Shape({64})), Filled(Shape({64}))}, {{"num_groups", ScalarAttr("num_groups", 8)}},
                   8 * 64 * 1024});
  cases.push_back({"cost", "LpNormalization [1024,1024]", "LpNormalization", 22, {Filled(square)}, {}, 1 << 20});
  AttributeMap pool;
  pool["kernel_shape"] = IntsAttr("kernel_shape", {3, 3});
  pool["pads"] = IntsAttr("pads", {1, 1, 1, 1});
  cases.push_back({"cost", "MaxPool [1,64,56,56] k3 p1", "MaxPool", 12, {Filled(Shape({1, 64, 56, 56}))}, pool,
                   64 * 56 * 56 * 9});
  cases.push_back({"cost", "AveragePool [1,64,56,56] k3 p1", "AveragePool", 19, {Filled(Shape({1, 64, 56, 56}))}, pool,
                   64 * 56 * 56 * 9});
  cases.push_back({"cost", "GlobalAveragePool [8,256,14,14]", "GlobalAveragePool", 22, {Filled(Shape({8, 256, 14, 14}))},
                   {}, 8 * 256 * 196});
  cases.push_back({"cost", "TopK [1024,1024] k=10", "TopK", 11, {Filled(square), Int64s({10})}, {}, 1 << 20});
  cases.push_back({"cost", "CumSum [1024,1024] axis=1", "CumSum", 14, {Filled(square), Int64s({1})}, {}, 1 << 20});
  return cases;
}

// Softmax over attention scores (last axis, short rows): the shapes of BERT-base at
// sequence 128 and ViT-B/16 (197 tokens), one layer's node each.
std::vector<Case> AttentionSoftmaxCorpus() {
  std::vector<Case> cases;
  for (int64_t tokens : {128, 197}) {
    const std::string t = std::to_string(tokens);
    cases.push_back({"cost", "Softmax [1,12," + t + "," + t + "] axis=-1", "Softmax", 13,
                     {Filled(Shape({1, 12, tokens, tokens}))}, {}, 12 * tokens * tokens});
  }
  return cases;
}

}  // namespace
}  // namespace onnx_light

int main(int argc, char** argv) {
  using namespace onnx_light;
  const int samples = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::string only = argc > 2 ? argv[2] : "";  // "sweep", "cost" or "attention": run one section
  if (!KernelRegistry::Global().status().ok()) {
    std::fprintf(stderr, "%s\n", KernelRegistry::Global().status().ToString().c_str());
    return 1;
  }
  std::printf("median and min (us) of %d interleaved samples; ratio = serial / parallel\n", samples);
  std::printf("%-19s %-25s %8s | %9s %9s %9s | %9s %9s %9s | %6s %6s %6s\n", "family", "shape", "work",
              "ser_med", "frc2_med", "def2_med", "ser_min", "frc2_min", "def2_min", "frc_md", "frc_mn", "def_mn");
  std::vector<std::string> raw;
  for (const Case& c : only == "cost" || only == "attention" ? std::vector<Case>{} : Corpus()) {
    auto serial = Runner::Create(c, 1, false);
    auto forced = Runner::Create(c, 2, true);
    auto defaults = Runner::Create(c, 2, false);
    const auto t = SampleInterleaved({serial.get(), forced.get(), defaults.get()}, samples);
    const auto &s = t[0], &f = t[1], &d = t[2];
    std::printf("%-19s %-25s %8lld | %9.2f %9.2f %9.2f | %9.2f %9.2f %9.2f | %6.2f %6.2f %6.2f\n", c.family.c_str(),
                c.label.c_str(), static_cast<long long>(c.work), Median(s), Median(f), Median(d), Min(s), Min(f),
                Min(d), Median(s) / Median(f), Min(s) / Min(f), Min(s) / Min(d));
    std::fflush(stdout);
    raw.push_back(c.family + " " + c.label + "\n  serial:   " + Join(s) + "\n  forced2:  " + Join(f) +
                  "\n  default2: " + Join(d));
  }
  // Conservative thresholds: offer 2 participants only when the serial run lasts at least
  // 100 us, about three times the ~30 us (100k-cycle) cost of opening a region.
  std::printf("\nserial cost per work unit (min of %d samples) and the threshold it suggests\n", samples);
  std::printf("%-40s %10s %10s %14s\n", "case", "serial_us", "ns/unit", "100us/ns_unit");
  const std::vector<Case> costs =
      only == "sweep" ? std::vector<Case>{} : (only == "attention" ? AttentionSoftmaxCorpus() : CostCorpus());
  for (const Case& c : costs) {
    auto serial = Runner::Create(c, 1, false);
    const auto t = SampleInterleaved({serial.get()}, samples);
    const double ns = Min(t[0]) * 1000.0 / static_cast<double>(c.work);
    std::printf("%-40s %10.1f %10.3f %14.0f\n", c.label.c_str(), Min(t[0]), ns, 100000.0 / ns);
    raw.push_back(c.label + "\n  serial:   " + Join(t[0]));
  }

  std::printf("\nraw samples (us per run)\n");
  for (const std::string& r : raw) std::printf("%s\n", r.c_str());
  return 0;
}
