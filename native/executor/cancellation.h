// CancellationToken: set by RunOptions (terminate or timeout), polled between blocks.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace onnx_light {

class CancellationToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  // Cancels once steady_clock passes `deadline`.
  void SetDeadline(std::chrono::steady_clock::time_point deadline) {
    deadline_ns_.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
  }
  // Cancels `seconds` from now. A timeout too far ahead to represent (1e10 s is past
  // int64 nanoseconds) saturates to "no deadline" instead of overflowing into the past;
  // NaN or infinity means no deadline too, zero or less one already passed.
  void SetTimeout(double seconds) {
    using Clock = std::chrono::steady_clock;
    const int64_t now = Clock::now().time_since_epoch().count();
    const double ticks = seconds * static_cast<double>(Clock::period::den) / static_cast<double>(Clock::period::num);
    int64_t deadline = kNoDeadline;
    if (!(ticks > 0)) {
      deadline = seconds <= 0 ? now : kNoDeadline;  // NaN compares false both ways
    } else if (ticks < static_cast<double>(kNoDeadline - now)) {
      deadline = now + static_cast<int64_t>(ticks);
    }
    deadline_ns_.store(deadline, std::memory_order_relaxed);
  }
  bool has_deadline() const { return deadline_ns_.load(std::memory_order_relaxed) != kNoDeadline; }
  void Reset() {
    cancelled_.store(false, std::memory_order_relaxed);
    deadline_ns_.store(kNoDeadline, std::memory_order_relaxed);
  }
  bool IsCancelled() const {
    if (cancelled_.load(std::memory_order_relaxed)) return true;
    const int64_t deadline = deadline_ns_.load(std::memory_order_relaxed);
    return deadline != kNoDeadline && std::chrono::steady_clock::now().time_since_epoch().count() >= deadline;
  }
  bool deadline_passed() const {
    const int64_t deadline = deadline_ns_.load(std::memory_order_relaxed);
    return deadline != kNoDeadline && std::chrono::steady_clock::now().time_since_epoch().count() >= deadline;
  }

 private:
  static constexpr int64_t kNoDeadline = INT64_MAX;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> deadline_ns_{kNoDeadline};
};

}  // namespace onnx_light
