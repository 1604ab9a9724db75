// The measurement rule of kernel_baseline, stated once:
//
// The policies of one cell (serial, the session's parallel default, and a calibrated
// profile when one is given) are timed interleaved: block b runs each policy once, the
// order rotated by b (serial, parallel, calibrated; then parallel, calibrated, serial; ...),
// so that every policy sees the same machine state. Each block gives one speed-up per
// non-serial policy, serial time / policy time, from samples taken side by side. A cell
// repeats blocks until, for every non-serial policy, the 95% distribution-free confidence
// interval of the median speed-up (MedianInterval below) is narrow: high / low <=
// 1 + ci_width, after at least min_blocks blocks. It stops earlier, undecided, when its
// time cap or max_blocks is reached. The cell's value in a run is that median speed-up.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace onnx_light {
namespace baseline {

struct MedianEstimate {
  double median = 0;
  double low = 0;   // the 95% confidence interval of the median: [low, high]
  double high = 0;  // (equal to min / max of the samples when fewer than 6)
  bool exact = false;  // whether the interval has its full 95% coverage (n >= 6)
};

// Median and its distribution-free confidence interval: the order statistics x(j) and
// x(n + 1 - j) with the largest j such that P(Binomial(n, 1/2) < j) <= 2.5%.
inline MedianEstimate MedianInterval(std::vector<double> x) {
  MedianEstimate e;
  const int n = static_cast<int>(x.size());
  if (n == 0) return e;
  std::sort(x.begin(), x.end());
  e.median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
  // Cumulative binomial(n, 1/2) probabilities P(X <= i), in logs to stay finite.
  int j = 0;  // 0: no rank has the coverage
  double cumulative = 0;
  for (int i = 0; i < n; ++i) {
    const double log_p = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0);
    cumulative += std::exp(log_p);  // P(X <= i)
    if (cumulative > 0.025) break;
    j = i + 1;  // P(X < j) = P(X <= i) <= 2.5%
  }
  if (j == 0) {
    e.low = x.front();
    e.high = x.back();
    return e;
  }
  e.low = x[j - 1];
  e.high = x[n - j];
  e.exact = true;
  return e;
}

// Whether an estimate of a ratio is decided: full coverage and high / low <= 1 + width.
inline bool Narrow(const MedianEstimate& e, double width) {
  return e.exact && e.low > 0 && e.high / e.low <= 1 + width;
}

// The policy order of block `b` over `count` policies: 0..count-1 rotated left by b.
inline std::vector<int> BlockOrder(int64_t b, int count) {
  std::vector<int> order(count);
  for (int i = 0; i < count; ++i) order[i] = static_cast<int>((b + i) % count);
  return order;
}

}  // namespace baseline
}  // namespace onnx_light
