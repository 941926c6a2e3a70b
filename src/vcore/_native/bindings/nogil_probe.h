// A probe that proves a kernel runs without the GIL, for the native contract tests, deterministically.
//
// When armed, the first kernel to reach a probe point (inside its GIL-released block) waits there until another
// thread disarms the probe. That thread is Python code, so it can only run if the kernel really released the GIL;
// if the kernel held it, nothing can release the probe and the wait ends at its deadline, recorded as such. A
// disarmed probe costs one relaxed atomic load per kernel call.
#pragma once
#include <pybind11/pybind11.h>

namespace vcore_bindings::nogil_probe {

// Where a kernel waits when the probe is armed (call without the GIL).
void point();
void register_probe(pybind11::module_& m);

}  // namespace vcore_bindings::nogil_probe
