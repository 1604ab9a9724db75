// Dispatch overhead of an empty parallel region over 2 participants: our executor vs an
// OpenMP `parallel for` (libgomp, in this benchmark only) vs spawning a std::thread per
// region; then the process CPU time burnt over an idle second after the last region.
// Batches of the three are interleaved so that they see the same machine noise; the
// output keeps every batch's per-region cost (raw samples) and the ratios of medians.
//
//   ./bazelw run --config=opt //benchmarks:parallel_for_overhead -- [batches] [regions_per_batch]
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "native/executor/parallel_for.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Nanoseconds per region over `regions` back-to-back regions.
template <typename F>
double NanosPerRegion(int regions, F&& region) {
  const auto start = Clock::now();
  for (int i = 0; i < regions; ++i) region();
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / regions;
}

volatile int sink;

void PrintSamples(const char* name, const std::vector<double>& samples) {
  std::printf("%-14s median %9.1f ns/region  samples:", name, Median(samples));
  for (double s : samples) std::printf(" %.1f", s);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 15;
  const int regions = argc > 2 ? std::atoi(argv[2]) : 20000;
  constexpr int kParticipants = 2;

  onnx_light::CpuExecutionPolicy policy;
  policy.num_threads = kParticipants;
  auto executor = onnx_light::CpuExecutor::Create(policy);
  if (!executor.ok()) {
    std::fprintf(stderr, "%s\n", executor.status().ToString().c_str());
    return 1;
  }
  onnx_light::ParallelContext ctx{executor->get(), nullptr, nullptr, "bench"};
  const onnx_light::ParallelPlan plan{"empty", 1};
  const auto ours = [&] {
    onnx_light::Status s = onnx_light::ParallelFor(ctx, kParticipants, plan, [](int64_t b, int64_t) {
      sink = static_cast<int>(b);
      return onnx_light::Status::Ok();
    });
    s.IgnoreError();
  };
  const auto openmp = [&] {
#pragma omp parallel for num_threads(kParticipants) schedule(static)
    for (int i = 0; i < kParticipants; ++i) sink = i;
  };
  // The executor's raw dispatch without ParallelFor's partitioning and bookkeeping.
  const auto raw = [&] {
    (*executor)->Run(kParticipants, [](int p) { sink = p; });
  };
  const auto spawn = [&] {
    std::thread worker([] { sink = 1; });
    sink = 0;
    worker.join();
  };

  // Idle cost of our pool first, before libgomp creates its own threads.
  NanosPerRegion(regions, ours);
  double cpu0 = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double our_idle_cpu = ProcessCpuSeconds() - cpu0;

  std::vector<double> our_samples, raw_samples, omp_samples, spawn_samples;
  NanosPerRegion(regions, openmp);  // warm-up: creates libgomp's pool
  for (int b = 0; b < batches; ++b) {
    our_samples.push_back(NanosPerRegion(regions, ours));
    raw_samples.push_back(NanosPerRegion(regions, raw));
    omp_samples.push_back(NanosPerRegion(regions, openmp));
    spawn_samples.push_back(NanosPerRegion(std::max(1, regions / 20), spawn));
  }

  cpu0 = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double both_idle_cpu = ProcessCpuSeconds() - cpu0;

  std::printf("parallel_for_overhead: empty region, %d participants, %d batches x %d regions\n", kParticipants,
              batches, regions);
  std::printf("executor spin window: %lld us (then park)\n", static_cast<long long>(policy.spin_microseconds));
  PrintSamples("onnx_light", our_samples);
  PrintSamples("executor_raw", raw_samples);
  PrintSamples("openmp", omp_samples);
  PrintSamples("thread_spawn", spawn_samples);
  std::printf("ratio onnx_light/openmp (median): %.3f\n", Median(our_samples) / Median(omp_samples));
  std::printf("ratio onnx_light/thread_spawn (median): %.3f\n", Median(our_samples) / Median(spawn_samples));
  std::printf("idle second, onnx_light pool only: process CPU %.4f s\n", our_idle_cpu);
  std::printf("idle second, onnx_light + libgomp pools: process CPU %.4f s (OMP_WAIT_POLICY=%s)\n", both_idle_cpu,
              std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "default");
  return 0;
}
