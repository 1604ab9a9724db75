// The LSTM step of the session-7 benchmark case (seq 32, batch 4, hidden 128, the default
// hidden block of 64 units) on gate_rows.h alone, for instruction counts under callgrind:
// per step and block, the step product of the batch rows against the block's packed R,
// then GateRows::lstm per row. Prints a checksum so nothing is optimised away.
//   ONNX_LIGHT_MAX_ISA=avx2 valgrind --tool=callgrind bazel-bin/native/kernels/rnn/step_profile
// Optional arguments: seq batch hidden block (defaults 32 4 128 64).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "native/kernels/rnn/gate_rows.h"

int main(int argc, char** argv) {
  using namespace onnx_light::rnn;
  // Optional arguments: seq batch hidden block.
  auto arg = [&](int i, int64_t fallback) { return argc > i ? std::atoll(argv[i]) : fallback; };
  const int64_t seq = arg(1, 32), batch = arg(2, 4), hidden = arg(3, 128), block = arg(4, 64);
  const int64_t gh = 4 * hidden, blocks = (hidden + block - 1) / block;
  std::vector<float> r(static_cast<size_t>(gh * hidden));
  uint32_t state = 1;
  for (float& v : r) v = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) * 0x1p-24f * 0.2f - 0.1f;
  // Gate rows in the kernel's order (block, gate, unit): a block's rows are contiguous.
  std::vector<int64_t> offsets = {0};
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t n = 4 * std::min(block, hidden - blk * block);
    offsets.push_back(offsets.back() + StepPanelFloats(n, hidden));
  }
  std::vector<float> panels(static_cast<size_t>(offsets.back()));
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t n = 4 * std::min(block, hidden - blk * block);
    PackStepPanels(r.data() + 4 * blk * block * hidden, n, hidden, hidden, panels.data() + offsets[blk]);
  }
  const GateRows& rows = BestGateRows();
  std::vector<float> h(static_cast<size_t>(batch * hidden), 0.1f), h_next(h.size()), cell(h.size(), 0.0f);
  std::vector<float> gates(static_cast<size_t>(batch * gh)), projection(static_cast<size_t>(gh), 0.05f);
  std::vector<float> bias(static_cast<size_t>(gh), 0.01f), peep(static_cast<size_t>(3 * hidden), 0.0f);
  for (int64_t s = 0; s < seq; ++s) {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t j0 = blk * block, units = std::min(block, hidden - j0), n = 4 * units;
      rows.product(batch, n, hidden, h.data(), hidden, panels.data() + offsets[blk], gates.data() + 4 * j0, gh);
      for (int64_t b = 0; b < batch; ++b) {
        rows.lstm(LstmRowArgs{units, gates.data() + b * gh + 4 * j0, projection.data(), bias.data(), peep.data(),
                              peep.data() + hidden, peep.data() + 2 * hidden, cell.data() + b * hidden + j0,
                              h_next.data() + b * hidden + j0});
      }
    }
    h.swap(h_next);
  }
  double sum = 0;
  for (float v : h) sum += v;
  std::printf("checksum %.9g\n", sum);
  return 0;
}
