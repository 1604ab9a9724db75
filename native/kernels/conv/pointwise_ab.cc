// Interleaved A/B, in one process, of the two engines a pointwise (1x1, stride 1, no pad)
// float convolution could take: A = ConvForward as it routes today (im2col-free GEMM on X,
// W packed by PackedConvWeights), B = ImplicitGemmConv called directly (positions as rows,
// W packed by PackImplicitWeights), both with bias and a fused Relu epilogue, batch 1.
// Not a benchmark of record and not a test: it is the measuring tool behind the decision
// not to admit 1x1 kernels into the implicit GEMM (benchmarks/reports/session12/h113/).
//
//   ./bazelw build //native/kernels/conv:pointwise_ab
//   bazel-bin/native/kernels/conv/pointwise_ab C M HW [threads=1] [rounds=6] [runs=30] [only=0]
//
// Per round (A then B in even rounds, B then A in odd ones, `runs` calls each): the median microseconds of each, B/A
// and the 1-minute load average. One participant: the thread's CPU time (time slices other processes take are excluded;
// their cache pollution is not); more: wall-clock time. only = 1 runs A alone, 2 B alone: under callgrind
// (ONNX_LIGHT_MAX_ISA=avx2), two runs with different `runs` give instructions per call by difference. The first line
// states the largest |A - B| over Y (the engines sum in different orders: not bit-identical).
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "native/executor/cpu_executor.h"
#include "native/kernels/conv/conv_float.h"
#include "native/kernels/conv/implicit_gemm.h"
#include "native/registry/kernel.h"

using namespace onnx_light;

namespace {

double LoadAverage() {
  double load = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s C M HW [threads] [rounds] [runs] [only]\n", argv[0]);
    return 2;
  }
  const int64_t c = std::atoll(argv[1]), m = std::atoll(argv[2]), hw = std::atoll(argv[3]);
  const int threads = argc > 4 ? std::atoi(argv[4]) : 1, rounds = argc > 5 ? std::atoi(argv[5]) : 6,
            runs = argc > 6 ? std::atoi(argv[6]) : 30, only = argc > 7 ? std::atoi(argv[7]) : 0;
  if (c < 2 || m < 1 || hw < 1 || threads < 1 || rounds < 0 || runs < 1) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  std::vector<float> x(c * hw * hw), w(m * c), b(m), y_a(m * hw * hw), y_b(m * hw * hw);
  uint32_t state = 1;
  for (std::vector<float>* v : {&x, &w, &b}) {
    for (float& f : *v) f = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f;
  }
  auto g = conv::ResolveConv(conv::ConvAttributes{}, Shape{1, c, hw, hw}, Shape{m, c, 1, 1}, "pointwise_ab");
  auto w_tensor = Tensor::Allocate(DataType::kFloat, Shape{m, c, 1, 1}, Allocator::Default());
  if (!g.ok() || !w_tensor.ok()) return 1;
  std::copy(w.begin(), w.end(), w_tensor->data<float>());
  auto gemm_packed = conv::PackedConvWeights::Pack(*w_tensor, 1);
  if (!gemm_packed.ok() || !gemm_packed->packed()) return 1;
  const int64_t implicit_size = conv::ImplicitPackedSize(m, c);
  if (implicit_size == 0) {
    std::fprintf(stderr, "no implicit tile on this CPU (ISA capped below AVX2)\n");
    return 1;
  }
  std::vector<float> implicit_packed(implicit_size);
  conv::PackImplicitWeights(m, c, w.data(), implicit_packed.data());

  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  auto executor = CpuExecutor::Create(policy);
  if (!executor.ok()) return 1;
  const std::string op = "Conv", node = "pointwise_ab";
  Allocator allocator;
  ParallelContext parallel;
  parallel.executor = threads > 1 ? executor->get() : nullptr;
  KernelContext ctx(&op, &node, {}, 1, &allocator, parallel, nullptr);
  const conv::ConvTuning tuning;
  gemm::Epilogue relu;
  relu.activation = gemm::Activation::kRelu;
  const clockid_t clock = threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
  const auto median_us = [&](bool implicit) {
    if (only == (implicit ? 1 : 2)) return 0.0;
    std::vector<double> samples;
    for (int r = 0; r < runs; ++r) {
      timespec t0, t1;
      clock_gettime(clock, &t0);
      const Status status =
          implicit ? conv::ImplicitGemmConv(ctx, *g, x.data(), w.data(), implicit_packed.data(), b.data(), y_b.data(),
                                            tuning.gemm, relu, tuning.implicit_chunk_panel_bytes)
                   : conv::ConvForward(ctx, *g, x.data(), w.data(), gemm_packed->Find(*w_tensor), b.data(), y_a.data(),
                                       tuning, relu);
      clock_gettime(clock, &t1);
      if (!status.ok()) {
        std::fprintf(stderr, "%s\n", status.ToString().c_str());
        std::exit(1);
      }
      samples.push_back(1e6 * static_cast<double>(t1.tv_sec - t0.tv_sec) +
                        1e-3 * static_cast<double>(t1.tv_nsec - t0.tv_nsec));
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  };
  median_us(false);  // warm-up, and Y of each engine
  median_us(true);
  if (only == 0) {
    double diff = 0;
    for (size_t i = 0; i < y_a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(y_a[i] - y_b[i])));
    std::printf("C %lld M %lld HW %lld threads %d: max |A - B| %.3g\n", static_cast<long long>(c),
                static_cast<long long>(m), static_cast<long long>(hw), threads, diff);
  }
  for (int r = 0; r < rounds; ++r) {
    // Even rounds A first, odd rounds B first (neither always runs after the other).
    double a = 0, bb = 0;
    if (r % 2 == 0) {
      a = median_us(false);
      bb = median_us(true);
    } else {
      bb = median_us(true);
      a = median_us(false);
    }
    std::printf("round %d load %.2f A_gemm_us %.1f B_implicit_us %.1f B/A %.3f\n", r, LoadAverage(), a, bb,
                a > 0 ? bb / a : 0.0);
  }
  return 0;
}
