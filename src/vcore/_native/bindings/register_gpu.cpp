// GPU device-level bindings (issue 3). Filled in by the GPU work.
#include "registry.h"

namespace vcore_bindings {
void register_gpu(pybind11::module_& m) { (void)m; }
}  // namespace vcore_bindings
