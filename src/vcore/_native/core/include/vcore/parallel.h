// Opportunistic block parallelism for kernels on a shared machine.
//
// The calling thread always works through the blocks itself; helper threads join if they wake up in time and
// take blocks from the same atomic counter. The caller waits only for blocks a helper has actually claimed, never
// for a helper to be scheduled, so on a loaded machine a late helper costs nothing (an OpenMP barrier would wait
// for every thread of the team to arrive). Results must not depend on which participant ran a block.
#pragma once
#include <cstdint>
#include <functional>

namespace vcore {

// Runs fn(block, participant) for every block in [0, n_blocks); participant is 0 for the caller and
// 1..max_participants()-1 for helpers, so callers can keep per-participant accumulators.
void parallel_blocks(int32_t n_blocks, const std::function<void(int32_t block, int32_t participant)>& fn);

// Upper bound on participant ids + 1 (the caller plus the helper threads), at least 1.
int32_t max_participants();

}  // namespace vcore
