// GFLOP/s of the GEMM engine, one CSV row per repetition (single-thread GFLOP/s from the
// thread's CPU time, which other processes on a shared machine do not inflate):
//   gemm_engine_bench [--kernel=avx512|avx2|neon|scalar] [--threads=N] [--reps=R] M N K [ta tb]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "native/kernels/gemm/engine.h"

using namespace onnx_light;
using namespace onnx_light::gemm;

int main(int argc, char** argv) {
  std::string kernel_name;
  int threads = 1, reps = 10;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--kernel=", 9) == 0) kernel_name = argv[i] + 9;
    else if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
    else if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::atoi(argv[i] + 7);
    else dims.push_back(std::atoll(argv[i]));
  }
  if (dims.size() != 3 && dims.size() != 5) {
    std::fprintf(stderr, "usage: gemm_engine_bench [--kernel=K] [--threads=N] [--reps=R] M N K [ta tb]\n");
    return 2;
  }
  const int64_t m = dims[0], n = dims[1], k = dims[2];
  const bool ta = dims.size() == 5 && dims[3] != 0, tb = dims.size() == 5 && dims[4] != 0;
  const MicroKernel* kernel = &BestKernel();
  for (const MicroKernel* candidate : SupportedKernels()) {
    if (kernel_name == candidate->name) kernel = candidate;
  }
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
  const auto cpu_now = [](clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
  };
  // process_cpu_seconds sums every participant's CPU time: compared with the one-thread
  // figure it shows the work a parallel split adds (repacking, partition, waiting spins).
  std::printf("kernel,threads,m,n,k,rep,wall_seconds,cpu_seconds,process_cpu_seconds,gflops\n");
  for (int rep = -2; rep < reps; ++rep) {  // two warm-up runs
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_now(CLOCK_THREAD_CPUTIME_ID), process_start = cpu_now(CLOCK_PROCESS_CPUTIME_ID);
    const Status s = SgemmWith(*kernel, parallel, &allocator, tuning, p, nullptr);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = cpu_now(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    const double process_cpu = cpu_now(CLOCK_PROCESS_CPUTIME_ID) - process_start;
    const double seconds = threads == 1 ? cpu : wall;
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    if (rep >= 0) {
      std::printf("%s,%d,%lld,%lld,%lld,%d,%.6e,%.6e,%.6e,%.2f\n", kernel->name, threads,
                  static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), rep, wall, cpu,
                  process_cpu, 2e-9 * m * n * k / seconds);
    }
  }
  return 0;
}
