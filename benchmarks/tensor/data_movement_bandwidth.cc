// Gather and Concat bandwidth against memcpy of the same output bytes, in one run, with
// 1 and 2 participants (portable-default tuning). Prints raw samples and medians.
//   ./bazelw run --config=opt //benchmarks/tensor:data_movement_bandwidth
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "native/kernels/tensor/cast_convert.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

constexpr int kRepeats = 7;

struct Sample {
  std::vector<double> seconds;
  double Median() const {
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
  }
};

Sample Time(const std::function<void()>& fn) {
  fn();  // warm-up: first touch of the output pages
  Sample s;
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    s.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return s;
}

// Runs one registered kernel on `inputs` with `threads` participants, default tuning.
class KernelRun {
 public:
  KernelRun(const std::string& op, int opset, std::vector<Value> inputs, AttributeMap attributes, int threads)
      : op_(op), inputs_(std::move(inputs)), attributes_(std::move(attributes)) {
    const DataType type = inputs_[0].tensor().dtype();
    const KernelDef* def = *KernelRegistry::Global().Find("", op, opset, type);
    std::vector<DataType> types;
    for (const Value& v : inputs_) types.push_back(v.tensor().dtype());
    KernelInfo info("", op, "bench", opset, &attributes_, types, 1,
                    ResolvedTuning::Defaults(KernelRegistry::Global().SchemaFor(*def, type)));
    kernel_ = std::move(def->factory(info).value());
    if (threads > 1) {
      CpuExecutionPolicy policy;
      policy.num_threads = threads;
      executor_ = *ExecutorRegistry::Global().Acquire(policy);
    }
  }
  void operator()() {
    std::vector<const Value*> in;
    for (const Value& v : inputs_) in.push_back(&v);
    KernelContext ctx(&op_, &node_, in, 1, &allocator_, ParallelContext{executor_.get(), nullptr, nullptr, op_.c_str()});
    Status s = kernel_->Compute(ctx);
    if (!s.ok()) std::fprintf(stderr, "%s\n", s.ToString().c_str());
  }

 private:
  std::string op_, node_ = "bench";
  std::vector<Value> inputs_;
  AttributeMap attributes_;
  std::unique_ptr<OpKernel> kernel_;
  std::shared_ptr<CpuExecutor> executor_;
  Allocator allocator_;
};

Tensor Filled(Shape shape, DataType type) {
  Tensor t = *Tensor::Allocate(type, std::move(shape), Allocator::Default());
  std::memset(t.raw_data(), 1, t.byte_size());
  return t;
}

void Report(const char* name, int threads, double bytes, const Sample& s) {
  std::printf("%-28s threads=%d  median %8.3f ms  %6.2f GB/s written  samples(ms):", name, threads,
              s.Median() * 1e3, bytes / s.Median() / 1e9);
  for (double x : s.seconds) std::printf(" %.3f", x * 1e3);
  std::printf("\n");
}

void Main() {
  // Gather: 65536 rows of 256 floats (64 MiB), every row once in a scrambled order.
  const int64_t rows = 65536, cols = 256;
  Tensor data = Filled({rows, cols}, DataType::kFloat);
  Tensor indices = *Tensor::Allocate(DataType::kInt64, Shape({rows}), Allocator::Default());
  for (int64_t i = 0; i < rows; ++i) indices.data<int64_t>()[i] = (i * 40503) % rows;
  // Concat: two [4096, 2048] float halves along axis 1 (64 MiB out).
  Tensor left = Filled({4096, 2048}, DataType::kFloat), right = Filled({4096, 2048}, DataType::kFloat);
  const double bytes = static_cast<double>(rows * cols * 4);
  std::vector<char> src(static_cast<size_t>(bytes), 1), dst(static_cast<size_t>(bytes));

  Report("memcpy 64MiB, warm dst", 1, bytes, Time([&] { std::memcpy(dst.data(), src.data(), dst.size()); }));
  // Kernels write a freshly allocated output each run (first-touch page faults included):
  // the like-for-like baseline is memcpy into a fresh buffer from the same allocator.
  Allocator fresh;
  Report("memcpy 64MiB, fresh dst", 1, bytes, Time([&] {
           Tensor out = *Tensor::Allocate(DataType::kFloat, Shape({rows, cols}), &fresh);
           std::memcpy(out.raw_data(), src.data(), dst.size());
         }));
  // The conversion alone, into a warm buffer: what Cast float->float16 costs without the
  // fresh-output page faults (16M elements, 64 MiB read, 32 MiB written).
  {
    const int64_t n = rows * cols;
    std::vector<uint16_t> half(n);
    const float* in = reinterpret_cast<const float*>(src.data());
    Report("CastElements f32->f16 warm", 1, n * 2.0, Time([&] {
             Status s = CastElements(DataType::kFloat, in, DataType::kFloat16, half.data(), 0, n, CastOptions{});
             if (!s.ok()) std::fprintf(stderr, "%s\n", s.ToString().c_str());
           }));
  }
  Attribute axis1;
  axis1.name = "axis";
  axis1.type = Attribute::Type::kInt;
  axis1.i = 1;
  for (int threads : {1, 2}) {
    KernelRun gather("Gather", 13, {Value(data), Value(indices)}, {}, threads);
    Report("Gather [65536,256] rows", threads, bytes, Time([&] { gather(); }));
    KernelRun concat("Concat", 13, {Value(left), Value(right)}, {{"axis", axis1}}, threads);
    Report("Concat 2x[4096,2048] axis1", threads, bytes, Time([&] { concat(); }));
  }
}

}  // namespace
}  // namespace onnx_light

int main() {
  onnx_light::Main();
  return 0;
}
