#include "benchmarks/kernel_baseline/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace onnx_light {
namespace baseline {
namespace {

constexpr int64_t kElements = int64_t{1} << 16;

Tensor Codes() {
  auto t = Tensor::Allocate(DataType::kInt64, Shape({kElements}), Allocator::Default());
  for (int64_t i = 0; i < kElements; ++i) t->data<int64_t>()[i] = (i * 7) % 64;
  return *t;
}

std::vector<int64_t> Keys() {
  std::vector<int64_t> keys(64);
  for (int64_t i = 0; i < 64; ++i) keys[i] = i;
  return keys;
}

// The two cells of the kernel report whose parallel arm lost with identical work:
// CategoryMapper int64 -> string (one region) and LabelEncoder-4 int64 -> int64 (none).
struct CellCase {
  std::string name;
  std::string op;
  int opset;
  int64_t output_bytes;
  int regions;  // regions the parallel arm opens
};

void PrintTo(const CellCase& c, std::ostream* os) { *os << c.name; }

void AddInputs(const CellCase& c, KernelRunner& r) {
  r.Input(Codes());
  if (c.op == "CategoryMapper") {
    std::vector<std::string> names(64);
    for (int i = 0; i < 64; ++i) names[i] = "c" + std::to_string(i);
    r.Attr("cats_int64s", Keys()).Attr("cats_strings", names);
  } else {
    std::vector<int64_t> values(64);
    for (int64_t i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
    r.Attr("keys_int64s", Keys()).Attr("values_int64s", values).Attr("default_int64", int64_t{-1});
  }
}

class MeasureInterleavedTest : public testing::TestWithParam<CellCase> {
 protected:
  Interleaved Measure(bool warmup) {
    const CellCase& c = GetParam();
    KernelRunner runner(c.op, c.opset, "ai.onnx.ml");
    AddInputs(c, runner);
    // The kernel report's three policies; the third stands for a calibrated profile.
    const std::vector<Policy> policies = {{"serial", 1, nullptr}, {"parallel", 2, nullptr}, {"calibrated", 2, nullptr}};
    MeasureOptions o;
    o.min_blocks = o.max_blocks = 4;                           // two full rotations of the order
    o.cell_time_cap_ms = std::numeric_limits<int64_t>::max();  // blocks, never time, end the cell
    o.warmup = warmup;
    Interleaved m = MeasureInterleaved(runner, policies, o);
    for (const CellResult& cell : m.cells) EXPECT_TRUE(cell.status.ok()) << cell.status.ToString();
    EXPECT_EQ(m.blocks, 4);
    return m;
  }
};

// Holding a run's outputs until its policy runs again (the old harness) made the live set
// grow by one output per policy over the first blocks; a held output would show here as a
// difference of output_bytes. A quarter of it bounds what else moves between runs (the
// last run's region events, a few hundred bytes).
TEST_P(MeasureInterleavedTest, EveryRunStartsWithTheSameLiveHeap) {
  for (bool warmup : {true, false}) {
    const Interleaved m = Measure(warmup);
    std::vector<int64_t> live;
    for (const CellResult& cell : m.cells) {
      ASSERT_EQ(cell.live_bytes_before.size(), 4u);
      live.insert(live.end(), cell.live_bytes_before.begin(), cell.live_bytes_before.end());
    }
    // Without a warm-up the first serial run takes the reference: it is the only run
    // that starts without it.
    const auto [lo, hi] = std::minmax_element(live.begin() + (warmup ? 0 : 1), live.end());
    EXPECT_LT(*hi - *lo, GetParam().output_bytes / 4) << "warmup " << warmup;
  }
}

TEST_P(MeasureInterleavedTest, ArmsRunTheSameAllocationsAndTheirOwnRegions) {
  const Interleaved m = Measure(/*warmup=*/true);
  const CellResult& serial = m.cells[0];
  for (const CellResult& cell : m.cells) {
    EXPECT_EQ(cell.last.allocation.allocations, serial.last.allocation.allocations);
    EXPECT_EQ(cell.last.allocation.bytes_allocated, serial.last.allocation.bytes_allocated);
    EXPECT_EQ(cell.last.allocation.bytes_allocated, GetParam().output_bytes);
    EXPECT_TRUE(cell.outputs_identical);
    EXPECT_TRUE(cell.compared) << "each policy is compared once (serial: a later run with its first)";
    EXPECT_TRUE(cell.last.outputs.empty()) << "outputs must not outlive their run";
  }
  EXPECT_LE(serial.last.regions.size(), 1u);
  for (const RegionEvent& r : serial.last.regions) EXPECT_EQ(r.admitted_participants, 1);
  EXPECT_EQ(m.cells[1].last.regions.size(), static_cast<size_t>(GetParam().regions));
  EXPECT_EQ(m.cells[2].last.regions.size(), static_cast<size_t>(GetParam().regions));
}

INSTANTIATE_TEST_SUITE_P(ReportCells, MeasureInterleavedTest,
                         testing::Values(CellCase{"CategoryMapperIntToString", "CategoryMapper", 1,
                                                  kElements* static_cast<int64_t>(sizeof(std::string)), 1},
                                         CellCase{"LabelEncoderIntToInt", "LabelEncoder", 4, kElements * 8, 0}),
                         [](const testing::TestParamInfo<CellCase>& info) { return info.param.name; });

// A cell with a 32 MiB output (Abs over 2^23 floats: the output is the only allocation, no
// scratch from malloc): a fresh block of that size comes from mmap and faults on first
// touch (16 huge pages, or 8192 small ones where huge pages are off), a cached one does
// not. With a warm-up every timed run reuses the cell's warmed allocator; without, every
// run takes a fresh one. Faults are the process's: a handful elsewhere (the executor, the
// events) stay far below the output's 16.
TEST(MeasureInterleavedAllocatorTest, WarmedRunsTakeNoFreshPagesAndColdRunsDo) {
  constexpr int64_t kLarge = int64_t{1} << 23;  // floats: 32 MiB
  constexpr int64_t kOutputHugePages = kLarge * 4 / (int64_t{2} << 20);
  auto x = Tensor::Allocate(DataType::kFloat, Shape({kLarge}), Allocator::Default());
  for (int64_t i = 0; i < kLarge; ++i) x->data<float>()[i] = static_cast<float>(i % 64) - 32.0f;
  KernelRunner runner("Abs", 13);
  runner.Input(*x);
  const std::vector<Policy> policies = {{"serial", 1, nullptr}, {"parallel", 2, nullptr}};
  MeasureOptions o;
  o.min_blocks = o.max_blocks = 2;
  o.cell_time_cap_ms = std::numeric_limits<int64_t>::max();
  for (bool warmup : {true, false}) {
    o.warmup = warmup;
    const Interleaved m = MeasureInterleaved(runner, policies, o);
    ASSERT_EQ(m.blocks, 2);
    for (size_t p = 0; p < m.cells.size(); ++p) {
      const CellResult& cell = m.cells[p];
      ASSERT_TRUE(cell.status.ok()) << cell.status.ToString();
      EXPECT_TRUE(cell.outputs_identical);
      EXPECT_EQ(cell.last.allocation.bytes_allocated, kLarge * 4) << "a run's own bytes, shared allocator or not";
      ASSERT_EQ(cell.minor_faults.size(), 2u);
      for (size_t b = 0; b < cell.minor_faults.size(); ++b) {
        if (warmup) {
          EXPECT_LT(cell.minor_faults[b], kOutputHugePages / 2) << policies[p].name << " block " << b;
        } else {
          EXPECT_GE(cell.minor_faults[b], kOutputHugePages) << policies[p].name << " block " << b;
        }
      }
    }
  }
}

// The kernel report decides nothing from a run of fewer than 6 blocks, so the time cap
// ends a cell only once it has min_blocks of them, however long they take.
TEST(MeasureInterleavedTimeCapTest, StopsACellOnlyAfterMinBlocks) {
  KernelRunner runner("Abs", 13);
  runner.Input(Codes());
  const std::vector<Policy> policies = {{"serial", 1, nullptr}, {"parallel", 2, nullptr}};
  MeasureOptions o;
  o.min_blocks = 6;
  o.max_blocks = 200;
  o.ci_width = -1;         // never narrow enough: only the cap or max_blocks ends the cell
  o.cell_time_cap_ms = 0;  // past the cap from the first block
  const Interleaved m = MeasureInterleaved(runner, policies, o);
  EXPECT_EQ(m.stopped_by, "time_cap");
  EXPECT_EQ(m.blocks, 6);
  EXPECT_EQ(m.cells[1].samples_ns.size(), 6u);
}

Value Strings(std::vector<std::string> values) {
  auto t = Tensor::Allocate(DataType::kString, Shape({static_cast<int64_t>(values.size())}), Allocator::Default());
  for (size_t i = 0; i < values.size(); ++i) t->data<std::string>()[i] = values[i];
  return Value(*t);
}

TEST(SameOutputsTest, ComparesStringsByValue) {
  EXPECT_TRUE(SameOutputs({Strings({"a", "bc"})}, {Strings({"a", "bc"})}));
  EXPECT_FALSE(SameOutputs({Strings({"a", "bc"})}, {Strings({"a", "bd"})}));
}

TEST(SameOutputsTest, ComparesSequencesAndMapsItemByItem) {
  const Value a = Value::Sequence({Strings({"x"}), Strings({"y"})});
  const Value b = Value::Sequence({Strings({"x"}), Strings({"z"})});
  EXPECT_TRUE(SameOutputs({a}, {a}));
  EXPECT_FALSE(SameOutputs({a}, {b}));
  auto keys = Tensor::Allocate(DataType::kInt64, Shape({1}), Allocator::Default());
  keys->data<int64_t>()[0] = 3;
  const Value map1 = Value::Map(*keys, Strings({"p"}).tensor());
  const Value map2 = Value::Map(*keys, Strings({"q"}).tensor());
  EXPECT_TRUE(SameOutputs({map1}, {map1}));
  EXPECT_FALSE(SameOutputs({map1}, {map2}));
}

TEST(SameOutputsTest, ComparesNumbersBitwise) {
  auto x = Tensor::Allocate(DataType::kFloat, Shape({2}), Allocator::Default());
  auto y = Tensor::Allocate(DataType::kFloat, Shape({2}), Allocator::Default());
  x->data<float>()[0] = y->data<float>()[0] = 1.0f;
  x->data<float>()[1] = 0.0f;
  y->data<float>()[1] = -0.0f;  // equal as numbers, not as bits
  EXPECT_TRUE(SameOutputs({Value(*x)}, {Value(*x)}));
  EXPECT_FALSE(SameOutputs({Value(*x)}, {Value(*y)}));
}

}  // namespace
}  // namespace baseline
}  // namespace onnx_light
