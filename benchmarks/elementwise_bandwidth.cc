// Elementwise bandwidth benchmark (not a test): Add on float32 against the machine's copy
// bandwidth measured in the same run, and the serial/parallel crossover of Add and Sigmoid.
//
//   ./bazelw run --config=opt //benchmarks:elementwise_bandwidth -- [--elements=16777216]
//       [--threads=2] [--repeats=15] [--crossover]
//
// Bandwidth counts bytes read plus bytes written: memcpy moves 2n floats, Add 3n. Every
// sample (milliseconds) is printed, then the median and the ratios.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "native/executor/cpu_executor.h"
#include "native/executor/parallel_for.h"
#include "native/kernels/elementwise/binary_kernel.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int64_t elements = int64_t{1} << 24;
  int threads = 2;
  int repeats = 15;
  bool crossover = false;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) { return a.rfind(name, 0) == 0 ? a.c_str() + std::strlen(name) : nullptr; };
    if (const char* v = value("--elements="))
      o.elements = std::atoll(v);
    else if (const char* v = value("--threads="))
      o.threads = std::atoi(v);
    else if (const char* v = value("--repeats="))
      o.repeats = std::atoi(v);
    else if (a == "--crossover")
      o.crossover = true;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

template <typename Fn>
std::vector<double> Sample(int repeats, Fn&& fn) {
  fn();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Report(const char* name, const std::vector<double>& ms, double bytes) {
  std::printf("%-36s median %9.3f ms  %7.2f GB/s  samples:", name, Median(ms), bytes / Median(ms) / 1e6);
  for (double s : ms) std::printf(" %.3f", s);
  std::printf("\n");
}

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(1);
  }
}

// One registered kernel, created as a session would create it.
class KernelRunner {
 public:
  KernelRunner(const std::string& op, int opset, std::vector<const Value*> inputs, int64_t minimum_elements)
      : op_(op), inputs_(std::move(inputs)) {
    Check(KernelRegistry::Global().status());
    std::vector<DataType> types;
    for (const Value* v : inputs_) types.push_back(v->tensor().dtype());
    auto def = KernelRegistry::Global().Find("", op, opset, types[0]);
    Check(def.status());
    ResolvedTuning tuning = ResolvedTuning::Defaults(KernelRegistry::Global().SchemaFor(**def, types[0]));
    if (minimum_elements > 0)
      Check(tuning.Set("parallel.minimum_elements", minimum_elements, ValueSource::kExplicitProfile));
    KernelInfo info("", op, "bench", opset, &attributes_, types, 1, tuning);
    auto kernel = (*def)->factory(info);
    Check(kernel.status());
    kernel_ = std::move(*kernel);
  }

  // Runs once; the output is freed when the context goes (a session would reuse it).
  void Run(CpuExecutor* executor) {
    ParallelContext parallel{executor, nullptr, nullptr, op_.c_str()};
    KernelContext ctx(&op_, &name_, inputs_, 1, &allocator_, parallel);
    Check(kernel_->Compute(ctx));
  }

 private:
  std::string op_, name_ = "bench";
  std::vector<const Value*> inputs_;
  AttributeMap attributes_;
  Allocator allocator_;
  std::unique_ptr<OpKernel> kernel_;
};

Tensor Filled(int64_t n, float value) {
  auto t = Tensor::Allocate(DataType::kFloat, Shape{n}, Allocator::Default());
  Check(t.status());
  std::fill(t->data<float>(), t->data<float>() + n, value);
  return *t;
}

void Bandwidth(const Options& o, CpuExecutor* executor) {
  const int64_t n = o.elements;
  Value a(Filled(n, 1.5f)), b(Filled(n, 2.25f));
  Tensor dst = Filled(n, 0);
  const float* src = a.tensor().data<float>();
  float* out = dst.data<float>();
  ParallelContext parallel{executor, nullptr, nullptr, "memcpy"};
  const double copy_bytes = 2.0 * n * sizeof(float), add_bytes = 3.0 * n * sizeof(float);

  auto copy1 = Sample(o.repeats, [&] { std::memcpy(out, src, n * sizeof(float)); });
  auto copyn = Sample(o.repeats, [&] {
    Check(ParallelFor(parallel, n, ParallelPlan{"memcpy", 4096}, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin, src + begin, (end - begin) * sizeof(float));
      return Status::Ok();
    }));
  });
  KernelRunner add_kernel("Add", 14, {&a, &b}, 0);
  auto add_fresh = Sample(o.repeats, [&] { add_kernel.Run(executor); });
  // The kernel's own loop (plan, blocks, runs) into a reused output: what Add costs once
  // the session recycles buffers, without first-touch page faults of a fresh 64 MB.
  auto plan = elementwise::PlanBroadcast({a.tensor().shape(), b.tensor().shape()}, "bench");
  Check(plan.status());
  elementwise::ElementwisePolicy policy;
  const std::string op = "Add", name = "bench";
  KernelContext ctx(&op, &name, {&a, &b}, 1, Allocator::Default(), ParallelContext{executor, nullptr, nullptr, "Add"});
  auto add = [](float x, float y) { return x + y; };
  auto add_warm = Sample(o.repeats, [&] {
    Check(elementwise::RunBinary(ctx, policy, "Add", add, *plan, src, b.tensor().data<float>(), out));
  });
  elementwise::ElementwisePolicy cached_stores = policy;
  cached_stores.streaming_store_elements = int64_t{1} << 50;
  auto add_cached = Sample(o.repeats, [&] {
    Check(elementwise::RunBinary(ctx, cached_stores, "Add", add, *plan, src, b.tensor().data<float>(), out));
  });

  std::printf("elements %lld, threads %d, repeats %d\n", static_cast<long long>(n), o.threads, o.repeats);
  Report("memcpy, 1 thread", copy1, copy_bytes);
  Report("memcpy, threads (ParallelFor)", copyn, copy_bytes);
  Report("Add kernel (fresh output buffer)", add_fresh, add_bytes);
  Report("Add loop (reused output, streamed)", add_warm, add_bytes);
  Report("Add loop (reused output, plain stores)", add_cached, add_bytes);
  const double copy_bw = std::max(copy_bytes / Median(copy1), copy_bytes / Median(copyn));
  std::printf("Add bandwidth / best copy bandwidth: kernel %.3f, loop streamed %.3f, loop plain stores %.3f\n",
              (add_bytes / Median(add_fresh)) / copy_bw, (add_bytes / Median(add_warm)) / copy_bw,
              (add_bytes / Median(add_cached)) / copy_bw);
}

// Serial vs parallel latency per size: where the parallel path starts to pay.
void Crossover(const Options& o, CpuExecutor* executor) {
  std::printf("size      op        serial_ms   parallel_ms  speedup\n");
  for (int64_t n = 1024; n <= (int64_t{1} << 20); n *= 2) {
    Value a(Filled(n, 0.5f)), b(Filled(n, 0.25f));
    for (const char* op : {"Add", "Sigmoid"}) {
      std::vector<const Value*> inputs = {&a};
      if (std::string(op) == "Add") inputs.push_back(&b);
      const int opset = std::string(op) == "Add" ? 14 : 13;
      KernelRunner serial(op, opset, inputs, int64_t{1} << 50);
      KernelRunner parallel(op, opset, inputs, 1);
      const int repeats = std::max(15, static_cast<int>((int64_t{1} << 22) / n));
      const double s = Median(Sample(repeats, [&] { serial.Run(executor); }));
      const double p = Median(Sample(repeats, [&] { parallel.Run(executor); }));
      std::printf("%-9lld %-9s %10.4f %12.4f %8.2f\n", static_cast<long long>(n), op, s, p, s / p);
    }
  }
}

}  // namespace
}  // namespace onnx_light

int main(int argc, char** argv) {
  using namespace onnx_light;
  const Options o = Parse(argc, argv);
  CpuExecutionPolicy policy;
  policy.num_threads = o.threads;
  auto executor = ExecutorRegistry::Global().Acquire(policy);
  Check(executor.status());
  if (o.crossover) {
    Crossover(o, executor->get());
  } else {
    Bandwidth(o, executor->get());
  }
  return 0;
}
