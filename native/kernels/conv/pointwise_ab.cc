// Interleaved A/B, in one process, of the engines a pointwise (1x1, stride 1, no pad) float convolution could take:
// A = ConvForward as it routes today (im2col-free GEMM on X, W packed by PackedConvWeights); B = ImplicitGemmConv
// called directly (positions as rows, W packed by PackImplicitWeights); C (1 thread, C a multiple of 16, M of the
// tile's columns) = B's register tile on a 16-channel-blocked copy of X made per call (ORT's NCHWc input layout). All
// with bias and a fused Relu epilogue, batch 1. Not a benchmark of record and not a test: the measuring tool behind
// benchmarks/reports/session12/h113/ (1x1 kernels stay on the GEMM).
//
//   ./bazelw build //native/kernels/conv:pointwise_ab
//   bazel-bin/native/kernels/conv/pointwise_ab C M HW [threads=1] [rounds=6] [runs=30] [only=0]
//
// Per round (A, B, C in even rounds, C, B, A in odd ones, `runs` calls each): the median microseconds of each, B/A, C/A
// and the 1-minute load average. One participant: the thread's CPU time (time slices other processes take are excluded;
// their cache pollution is not); more: wall-clock time. only = 1, 2, 3 runs A, B, C alone: under callgrind
// (ONNX_LIGHT_MAX_ISA=avx2), two runs with different `runs` give instructions per call by difference (C's include one
// extra copy of X, timed alone before the rounds). Before the rounds: the copy's median time, and the largest |A - B|
// and |A - C| over Y (A sums in another order than B and C; B and C run the same tile in the same k order).
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
  // C (only >= 3 or 0 with `blocked`): X copied once per call into 16-channel blocks
  // ([C/16][HW][16], the layout ORT's NCHWc pointwise kernels read), then the same
  // implicit tile with row i at position p0 + i of the copy and k = channel at
  // (k / 16) * HW * 16 + k % 16: a row's broadcasts walk one cache line for 16 k steps.
  // Serial, batch 1, C a multiple of 16.
  const conv::ImplicitTile tile = conv::ImplicitTileFor(m);
  const int64_t positions = hw * hw, tiles = (positions + tile.rows - 1) / tile.rows;
  std::vector<float> x_blocked(c * positions);
  std::vector<int64_t> blocked_offsets(c);
  for (int64_t k = 0; k < c; ++k) blocked_offsets[k] = k / 16 * positions * 16 + k % 16;
  std::vector<float> y_c(m * positions);
  alignas(64) float staged[conv::kMaxImplicitCols * conv::kMaxImplicitRows];
  const auto blocked_copy = [&]() {
    for (int64_t cb = 0; cb < c / 16; ++cb) {
      for (int64_t p = 0; p < positions; ++p) {
        for (int j = 0; j < 16; ++j) x_blocked[(cb * positions + p) * 16 + j] = x[(cb * 16 + j) * positions + p];
      }
    }
  };
  const auto blocked_conv = [&]() {
    blocked_copy();
    const float* rows[conv::kMaxImplicitRows];
    for (int64_t block = 0; block * tile.cols < m; ++block) {
      const int64_t m0 = block * tile.cols, channels = std::min<int64_t>(tile.cols, m - m0);
      for (int64_t t = 0; t < tiles; ++t) {
        const int64_t p0 = t * tile.rows, valid = std::min<int64_t>(tile.rows, positions - p0);
        for (int i = 0; i < tile.rows; ++i) rows[i] = x_blocked.data() + (i < valid ? p0 + i : p0) * 16;
        const bool full = channels == tile.cols;
        tile.fn(c, blocked_offsets.data(), rows, implicit_packed.data() + m0 * c, b.data() + m0,
                static_cast<int>(valid), static_cast<int>(channels), full ? y_c.data() + m0 * positions + p0 : staged,
                full ? positions : conv::kMaxImplicitRows, nullptr, nullptr);
        if (!full) return false;  // partial channel blocks: not in this experiment
      }
      relu.Apply(y_c.data() + m0 * positions, m0 * positions, channels, positions, positions);
    }
    return true;
  };
  const bool blocked = only >= 3 || (only == 0 && threads == 1 && c % 16 == 0 && m % tile.cols == 0);
  const clockid_t clock = threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
  const auto median_blocked_us = [&]() {
    if (!blocked || (only != 0 && only != 3)) return 0.0;
    std::vector<double> samples;
    for (int r = 0; r < runs; ++r) {
      timespec t0, t1;
      clock_gettime(clock, &t0);
      if (!blocked_conv()) std::exit(1);
      clock_gettime(clock, &t1);
      samples.push_back(1e6 * static_cast<double>(t1.tv_sec - t0.tv_sec) +
                        1e-3 * static_cast<double>(t1.tv_nsec - t0.tv_nsec));
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  };
  const auto median_us = [&](bool implicit) {
    if (only != 0 && only != (implicit ? 2 : 1)) return 0.0;
    std::vector<double> samples;
    for (int r = 0; r < runs; ++r) {
      timespec t0, t1;
      clock_gettime(clock, &t0);
      const Status status = implicit
                                ? conv::ImplicitGemmConv(ctx, *g, x.data(), w.data(), implicit_packed.data(), b.data(),
                                                         y_b.data(), tuning.gemm, relu,
                                                         tuning.implicit_chunk_panel_bytes, tuning.implicit_chunk_tiles)
                                : conv::ConvForward(ctx, *g, x.data(), w.data(), gemm_packed->Find(*w_tensor), b.data(),
                                                    y_a.data(), tuning, relu);
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
  median_blocked_us();
  if (blocked) {
    // The copy alone (scalar loops: an upper bound of what a SIMD transpose would take).
    std::vector<double> samples;
    for (int r = 0; r < runs; ++r) {
      timespec t0, t1;
      clock_gettime(clock, &t0);
      blocked_copy();
      clock_gettime(clock, &t1);
      samples.push_back(1e6 * static_cast<double>(t1.tv_sec - t0.tv_sec) +
                        1e-3 * static_cast<double>(t1.tv_nsec - t0.tv_nsec));
    }
    std::sort(samples.begin(), samples.end());
    std::printf("C's copy of X alone: median %.1f us\n", samples[samples.size() / 2]);
  }
  if (only == 0) {
    double diff = 0;
    for (size_t i = 0; i < y_a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(y_a[i] - y_b[i])));
    double diff_c = 0;
    for (size_t i = 0; blocked && i < y_a.size(); ++i)
      diff_c = std::max(diff_c, static_cast<double>(std::fabs(y_a[i] - y_c[i])));
    std::printf("C %lld M %lld HW %lld threads %d: max |A - B| %.3g, max |A - C| %.3g\n", static_cast<long long>(c),
                static_cast<long long>(m), static_cast<long long>(hw), threads, diff, diff_c);
  }
  for (int r = 0; r < rounds; ++r) {
    // Even rounds A first, odd rounds B first (neither always runs after the other).
    double a = 0, bb = 0, cc = 0;
    if (r % 2 == 0) {
      a = median_us(false);
      bb = median_us(true);
      cc = median_blocked_us();
    } else {
      cc = median_blocked_us();
      bb = median_us(true);
      a = median_us(false);
    }
    std::printf("round %d load %.2f A_gemm_us %.1f B_implicit_us %.1f B/A %.3f C_blocked_us %.1f C/A %.3f\n", r,
                LoadAverage(), a, bb, a > 0 ? bb / a : 0.0, cc, a > 0 ? cc / a : 0.0);
  }
  return 0;
}
