// The GIL probe (nogil_probe.h): armed -> waiting (a kernel reached a point) -> released (by another thread) or
// timed out (nobody could run: the kernel kept the GIL).
#include "nogil_probe.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace vcore_bindings::nogil_probe {

namespace {
enum State : int { kIdle = 0, kArmed = 1, kWaiting = 2, kReleased = 3, kTimedOut = 4 };
std::atomic<int> state{kIdle};
constexpr auto kDeadline = std::chrono::seconds(30);
}  // namespace

void point() {
  if (state.load(std::memory_order_relaxed) != kArmed) return;
  int armed = kArmed;
  if (!state.compare_exchange_strong(armed, kWaiting)) return;  // another kernel took it
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (state.load() == kWaiting) {
    if (std::chrono::steady_clock::now() > deadline) {
      int waiting = kWaiting;
      state.compare_exchange_strong(waiting, kTimedOut);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void register_probe(pybind11::module_& m) {
  m.def("_nogil_probe_arm", [] { state.store(kArmed); }, "arm the GIL probe (tests only)");
  m.def(
      "_nogil_probe_state", [] { return state.load(); },
      "0 idle, 1 armed, 2 a kernel waits at a probe point, 3 released by another thread, 4 timed out");
  m.def(
      "_nogil_probe_release",
      [] {
        int waiting = kWaiting;
        return state.compare_exchange_strong(waiting, kReleased);
      },
      "let the waiting kernel go on; True if one was waiting");
  m.def("_nogil_probe_reset", [] { state.store(kIdle); }, "disarm the GIL probe");
}

}  // namespace vcore_bindings::nogil_probe
