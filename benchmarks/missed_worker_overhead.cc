// A chain of small parallel regions at 1 thread vs 2 threads (issues 12, 17): what a region
// costs the caller when the worker misses it (its CPU is busy with another process). Run it
// with the second CPU deliberately busy so that the bad mode is steady, e.g.
//
//   taskset -c 1 sh -c 'while :; do :; done' &   # the noisy neighbour
//   ./bazelw run //benchmarks:missed_worker_overhead -- [rounds] [regions] [work_ns]
//
// Each round runs `regions` back-to-back regions of about work_ns of serial work (8 blocks)
// on a serial executor and then on a 2-thread one, interleaved, and prints per round: both
// means, p50 and p90 of per-region wall time, how many regions were slow (over twice the
// serial median: the caller was preempted, or, at 2 threads, also lost time to the worker)
// and in how many regions the worker ran blocks. On a loaded machine the means are ruled by
// the caller's own preemptions; the slow counts and p90 compare better. Nothing is asserted.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "native/executor/parallel_for.h"

namespace {

using Clock = std::chrono::steady_clock;

volatile double sink;

// About `ns` nanoseconds of dependent floating-point work.
void Work(int64_t iterations) {
  double x = 1.0;
  for (int64_t i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

int64_t Calibrate(int64_t ns) {
  // The fastest of several tries: a preempted try would make the work too short.
  int64_t it = 1000;
  for (;;) {
    double took = 1e300;
    for (int t = 0; t < 7; ++t) {
      const auto t0 = Clock::now();
      Work(it);
      took = std::min(took, std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    }
    if (took > 2e5) return static_cast<int64_t>(it * ns / took);
    it *= 2;
  }
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int regions = argc > 2 ? std::atoi(argv[2]) : 3000;
  const int64_t work_ns = argc > 3 ? std::atoll(argv[3]) : 20000;
  constexpr int kBlocks = 8;
  const int64_t per_block = Calibrate(work_ns / kBlocks);

  onnx_light::CpuExecutionPolicy two;
  two.num_threads = 2;
  auto executor = onnx_light::CpuExecutor::Create(two);
  if (!executor.ok()) {
    std::fprintf(stderr, "%s\n", executor.status().ToString().c_str());
    return 1;
  }
  onnx_light::EventCollector events(1 << 20);
  const onnx_light::ParallelPlan plan{"chain", 1};
  const auto body = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) Work(per_block);
    return onnx_light::Status::Ok();
  };
  const auto chain = [&](onnx_light::CpuExecutor* e, onnx_light::EventCollector* ev, std::vector<double>* each) {
    onnx_light::ParallelContext ctx{e, nullptr, ev, "chain"};
    const auto start = Clock::now();
    for (int r = 0; r < regions; ++r) {
      const auto t0 = Clock::now();
      onnx_light::ParallelFor(ctx, kBlocks, plan, body).IgnoreError();
      if (each) each->push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / regions;
  };

  std::printf("missed_worker_overhead: %d rounds x %d regions of ~%lld ns (%d blocks), spin window %lld us\n", rounds,
              regions, static_cast<long long>(work_ns), kBlocks, static_cast<long long>(two.spin_microseconds));
  chain(nullptr, nullptr, nullptr);  // warm-up
  chain(executor->get(), nullptr, nullptr);
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> serial_each, each;
    serial_each.reserve(regions);
    each.reserve(regions);
    events.Clear();
    const double serial = chain(nullptr, &events, &serial_each);
    events.Clear();
    const double parallel = chain(executor->get(), &events, &each);
    int worker_ran = 0;
    for (const auto& e : events.regions()) worker_ran += e.observed_participants > 1;
    // A region is slow when it took over twice the serial median: the caller was preempted
    // (both columns) or waited for the worker (2T only).
    const double slow = 2 * Percentile(serial_each, 0.5);
    const auto slow_count = [&](const std::vector<double>& v) {
      return std::count_if(v.begin(), v.end(), [&](double t) { return t > slow; });
    };
    ratios.push_back(parallel / serial);
    std::printf(
        "round %d  mean 1T %7.0f 2T %7.0f ns (2T/1T %.3f)  p50 1T %6.0f 2T %6.0f  p90 1T %6.0f 2T %6.0f"
        "  slow 1T %3ld 2T %3ld  worker ran blocks in %d/%d\n",
        round, serial, parallel, parallel / serial, Percentile(serial_each, 0.5), Percentile(each, 0.5),
        Percentile(serial_each, 0.9), Percentile(each, 0.9), static_cast<long>(slow_count(serial_each)),
        static_cast<long>(slow_count(each)), worker_ran, regions);
  }
  std::printf("2T/1T per round:");
  for (double r : ratios) std::printf(" %.3f", r);
  std::printf("  median %.3f\n", Percentile(ratios, 0.5));
  return 0;
}
