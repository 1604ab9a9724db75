// Fixture family: every op has a tuning schema and the family calls ParallelFor.
#pragma once
#include <cstdint>
namespace fixture {
int64_t ReluBlocks(int64_t n);
}  // namespace fixture
