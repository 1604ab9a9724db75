// GFLOP/s of the GEMM engine, one CSV row per repetition (single-thread GFLOP/s from the
// thread's CPU time, which other processes on a shared machine do not inflate):
//   gemm_engine_bench [--kernel=NAME] [--kc=KC] [--nc=NC] [--threads=N] [--reps=R] [--prepacked] M N K [ta tb]
// --kc / --nc replace the kernel's cache blocking (NC should be a multiple of its NR).
// --prepacked runs SgemmPrepackedB (best kernel) on B packed once before the timed runs:
// the path of Gemm/MatMul/FusedGemm with a constant B; at M = 1 with tb = 1 (a classifier
// head, e.g. `--prepacked 1 1000 1024 0 1`) it streams PrepackedB::GemvColumns, whose
// first use (building that copy) is one of the warm-up runs.
// --kernel=read_sum instead sums the floats of an M*N*K / min(M, N)-element matrix (the
// matrix a GEMV streams) on one thread: the read bandwidth ceiling of one core, reported
// in the gflops column as GB/s.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "native/kernels/common/isa_variants.h"
#include "native/kernels/gemm/engine.h"
#include "native/kernels/simd/rows.h"

using namespace onnx_light;
using namespace onnx_light::gemm;

namespace {

double CpuNow(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Sum of `count` floats with the best enabled simd/rows variant (RowSum): a read-bound
// loop, the ceiling a memory-bound GEMM shape is compared with.
float ReadSum(const float* p, int64_t count) { return simd::RowSum(p, count); }

int ReadCeiling(int64_t count, int reps) {
  count = count / 128 * 128;
  std::vector<float> data(count, 1.0f);
  std::printf("kernel,threads,m,n,k,rep,wall_seconds,cpu_seconds,process_cpu_seconds,gflops,kc,nc\n");
  volatile float sink = 0;
  for (int rep = -2; rep < reps; ++rep) {
    const double start = CpuNow(CLOCK_THREAD_CPUTIME_ID);
    sink = sink + ReadSum(data.data(), count);
    const double cpu = CpuNow(CLOCK_THREAD_CPUTIME_ID) - start;
    if (rep >= 0) {
      std::printf("read_sum,1,%lld,1,1,%d,%.6e,%.6e,%.6e,%.2f,0,0\n", static_cast<long long>(count), rep, cpu, cpu, cpu,
                  1e-9 * sizeof(float) * count / cpu);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kernel_name;
  int threads = 1, reps = 10;
  int64_t kc = 0, nc = 0;
  bool prepacked = false;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--kernel=", 9) == 0)
      kernel_name = argv[i] + 9;
    else if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = std::atoi(argv[i] + 10);
    else if (std::strncmp(argv[i], "--reps=", 7) == 0)
      reps = std::atoi(argv[i] + 7);
    else if (std::strncmp(argv[i], "--kc=", 5) == 0)
      kc = std::atoll(argv[i] + 5);
    else if (std::strncmp(argv[i], "--nc=", 5) == 0)
      nc = std::atoll(argv[i] + 5);
    else if (std::strcmp(argv[i], "--prepacked") == 0)
      prepacked = true;
    else
      dims.push_back(std::atoll(argv[i]));
  }
  if (dims.size() != 3 && dims.size() != 5) {
    std::fprintf(stderr,
                 "usage: gemm_engine_bench [--kernel=K] [--kc=KC] [--nc=NC] [--threads=N] [--reps=R] [--prepacked] M N "
                 "K [ta tb]\n");
    return 2;
  }
  const int64_t m = dims[0], n = dims[1], k = dims[2];
  const bool ta = dims.size() == 5 && dims[3] != 0, tb = dims.size() == 5 && dims[4] != 0;
  if (kernel_name == "read_sum") return ReadCeiling(m * n * k / std::max<int64_t>(1, std::min(m, n)), reps);
  MicroKernel kernel = BestKernel();
  for (const MicroKernel* candidate : SupportedKernels()) {
    if (kernel_name == candidate->name) kernel = *candidate;
  }
  if (kc > 0) kernel.kc = kc;
  if (nc > 0) kernel.nc = nc;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  CpuExecutionPolicy policy;
  policy.num_threads = threads;
  auto executor = CpuExecutor::Create(policy);
  if (!executor.ok()) return 1;
  ParallelContext parallel;
  parallel.executor = threads > 1 ? executor->get() : nullptr;
  Allocator allocator;
  GemmTuning tuning;
  tuning.parallel_minimum_tasks = 1;
  const GemmProblem p{ta, tb, m, n, k, 1.0f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.0f, c.data(), n};
  std::shared_ptr<const PrepackedB> packed_b;
  if (prepacked) {
    auto created = PrepackedB::Create(&allocator, tb, k, n, b.data(), p.ldb);
    if (!created.ok()) {
      std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
      return 1;
    }
    packed_b = *created;
    kernel = BestKernel();  // the layout PrepackedB packed for
  }
  // process_cpu_seconds sums every participant's CPU time: compared with the one-thread
  // figure it shows the work a parallel split adds (repacking, partition, waiting spins).
  std::printf("kernel,threads,m,n,k,rep,wall_seconds,cpu_seconds,process_cpu_seconds,gflops,kc,nc\n");
  for (int rep = -2; rep < reps; ++rep) {  // two warm-up runs
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = CpuNow(CLOCK_THREAD_CPUTIME_ID), process_start = CpuNow(CLOCK_PROCESS_CPUTIME_ID);
    const Status s = prepacked ? SgemmPrepackedB(parallel, &allocator, tuning, ta, m, 1.0f, a.data(), p.lda, *packed_b,
                                                 0.0f, c.data(), n)
                               : SgemmWith(kernel, parallel, &allocator, tuning, p, nullptr);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = CpuNow(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    const double process_cpu = CpuNow(CLOCK_PROCESS_CPUTIME_ID) - process_start;
    const double seconds = threads == 1 ? cpu : wall;
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    if (rep >= 0) {
      std::printf("%s,%d,%lld,%lld,%lld,%d,%.6e,%.6e,%.6e,%.2f,%lld,%lld\n", kernel.name, threads,
                  static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), rep, wall, cpu,
                  process_cpu, 2e-9 * m * n * k / seconds, static_cast<long long>(kernel.kc),
                  static_cast<long long>(kernel.nc));
    }
  }
  return 0;
}
