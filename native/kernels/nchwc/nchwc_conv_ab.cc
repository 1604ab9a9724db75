// Interleaved A/B, in one process, of one float convolution (bias + Relu, batch 1):
// A = ConvForward, today's NCHW FusedConv path (W packed by PackedConvWeights, as the
// kernel does at creation); B = NchwcConvForward on the blocked input, blocked output (W
// packed by PackedNchwcWeights). Not a benchmark of record and not a test: the measuring
// tool of NchwcConv (nchwc_conv.h) against the path it replaces.
//
//   ./bazelw build //native/kernels/nchwc:nchwc_conv_ab
//   bazel-bin/native/kernels/nchwc/nchwc_conv_ab C M HW KERNEL [threads=1] [rounds=6] [runs=30] [only=0]
//                                                [stride=1] [x_nchw=0]
//
// KERNEL 1: 1x1, no pad; 3: 3x3, pad 1; `stride` both ways. x_nchw = 1: B reads X in NCHW
// (NchwcConv's rank-4 input, the stems) instead of blocked. Per round (A then B in even
// rounds, B then A in odd ones, `runs` calls each): the median microseconds of each, B/A
// and the 1-minute load average. One participant: the thread's CPU time; more: wall-clock
// time. Before the rounds: the largest |A - B| over Y (reordered), and the median time of
// the reorders a lone blocked conv would add (X in, Y out). only = 1 or 2 runs A or B
// alone: under callgrind (ONNX_LIGHT_MAX_ISA=avx2) two runs with different `runs` give
// instructions per call by difference.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "native/executor/cpu_executor.h"
#include "native/kernels/conv/conv_float.h"
#include "native/kernels/nchwc/nchwc_conv.h"
#include "native/kernels/nchwc/reorder.h"
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

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s C M HW KERNEL [threads] [rounds] [runs] [only] [stride] [x_nchw]\n", argv[0]);
    return 2;
  }
  const int64_t c = std::atoll(argv[1]), m = std::atoll(argv[2]), hw = std::atoll(argv[3]),
                kernel = std::atoll(argv[4]);
  const int threads = argc > 5 ? std::atoi(argv[5]) : 1, rounds = argc > 6 ? std::atoi(argv[6]) : 6,
            runs = argc > 7 ? std::atoi(argv[7]) : 30, only = argc > 8 ? std::atoi(argv[8]) : 0;
  const int64_t stride = argc > 9 ? std::atoll(argv[9]) : 1;
  const bool x_nchw = argc > 10 && std::atoi(argv[10]) != 0;
  if (c < 1 || m < 1 || hw < 1 || (kernel != 1 && kernel != 3) || stride < 1 || threads < 1 || rounds < 0 || runs < 1) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  const int64_t plane = hw * hw, k = c * kernel * kernel, cb = CeilDiv(c, 16), mb = CeilDiv(m, 16);
  const int64_t out_hw = (hw + (kernel == 3 ? 2 : 0) - kernel) / stride + 1, out_plane = out_hw * out_hw;
  std::vector<float> x(c * plane), w(m * k), b(m), y_a(m * out_plane);
  uint32_t state = 1;
  for (std::vector<float>* v : {&x, &w, &b}) {
    for (float& f : *v) f = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f;
  }
  conv::ConvAttributes attrs;
  if (kernel == 3) attrs.pads = {1, 1, 1, 1};
  attrs.strides = {stride, stride};
  auto g = conv::ResolveConv(attrs, Shape{1, c, hw, hw}, Shape{m, c, kernel, kernel}, "nchwc_conv_ab");
  auto w_tensor = Tensor::Allocate(DataType::kFloat, Shape{m, c, kernel, kernel}, Allocator::Default());
  if (!g.ok() || !w_tensor.ok()) return 1;
  std::copy(w.begin(), w.end(), w_tensor->data<float>());
  auto nchw_packed = conv::PackedConvWeights::Pack(*w_tensor, 1);
  if (!nchw_packed.ok()) return 1;
  const nchwc::PackedNchwcWeights blocked_w = nchwc::PackedNchwcWeights::Pack(m, c, kernel, kernel, w.data());
  std::vector<float> x_blocked(cb * plane * 16), y_b(mb * out_plane * 16), y_back(m * out_plane);
  const nchwc::ReorderRows& reorder = nchwc::BestReorderRows();
  const auto reorder_in = [&] {
    for (int64_t blk = 0; blk < cb; ++blk) {
      reorder.to_blocked(x.data() + blk * 16 * plane, plane, static_cast<int>(std::min<int64_t>(16, c - blk * 16)),
                         plane, x_blocked.data() + blk * plane * 16);
    }
  };
  const auto reorder_out = [&] {
    for (int64_t blk = 0; blk < mb; ++blk) {
      reorder.from_blocked(y_b.data() + blk * out_plane * 16, static_cast<int>(std::min<int64_t>(16, m - blk * 16)),
                           out_plane, y_back.data() + blk * 16 * out_plane, out_plane);
    }
  };
  reorder_in();

  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  auto executor = CpuExecutor::Create(policy);
  if (!executor.ok()) return 1;
  const std::string op = "Conv", node = "nchwc_conv_ab";
  Allocator allocator;
  ParallelContext parallel;
  parallel.executor = threads > 1 ? executor->get() : nullptr;
  KernelContext ctx(&op, &node, {}, 1, &allocator, parallel, nullptr);
  const conv::ConvTuning tuning;
  gemm::Epilogue relu;
  relu.activation = gemm::Activation::kRelu;
  const clockid_t clock = threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
  const auto time_us = [&](auto&& fn) {
    std::vector<double> samples;
    for (int r = 0; r < runs; ++r) {
      timespec t0, t1;
      clock_gettime(clock, &t0);
      fn();
      clock_gettime(clock, &t1);
      samples.push_back(1e6 * static_cast<double>(t1.tv_sec - t0.tv_sec) +
                        1e-3 * static_cast<double>(t1.tv_nsec - t0.tv_nsec));
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  };
  const auto check = [](const Status& s) {
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
  };
  const auto run_a = [&] {
    check(conv::ConvForward(ctx, *g, x.data(), w.data(), nchw_packed->Find(*w_tensor), b.data(), y_a.data(), tuning,
                            relu));
  };
  const auto run_b = [&] {
    check(nchwc::NchwcConvForward(ctx, *g, !x_nchw, x_nchw ? x.data() : x_blocked.data(), blocked_w, b.data(),
                                  y_b.data(), tuning, relu));
  };
  const auto median_a = [&] { return only == 0 || only == 1 ? time_us(run_a) : 0.0; };
  const auto median_b = [&] { return only == 0 || only == 2 ? time_us(run_b) : 0.0; };
  median_a();  // warm-up, and Y of each
  median_b();
  if (only == 0) {
    reorder_out();
    double diff = 0;
    for (size_t i = 0; i < y_a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(y_a[i] - y_back[i])));
    const double reorders = time_us([&] {
      reorder_in();
      reorder_out();
    });
    std::printf(
        "C %lld M %lld HW %lld kernel %lld stride %lld X %s threads %d: max |A - B| %.3g; reorders X in + Y out %.1f "
        "us\n",
        static_cast<long long>(c), static_cast<long long>(m), static_cast<long long>(hw),
        static_cast<long long>(kernel), static_cast<long long>(stride), x_nchw ? "nchw" : "blocked", threads, diff,
        reorders);
  }
  for (int r = 0; r < rounds; ++r) {
    double a = 0, bb = 0;
    if (r % 2 == 0) {
      a = median_a();
      bb = median_b();
    } else {
      bb = median_b();
      a = median_a();
    }
    std::printf("round %d load %.2f A_nchw_us %.1f B_nchwc_us %.1f B/A %.3f\n", r, LoadAverage(), a, bb,
                a > 0 ? bb / a : 0.0);
  }
  return 0;
}
