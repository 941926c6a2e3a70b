// The vcore._native._core extension module: one register_<area> call per binding file.
#include "nogil_probe.h"
#include "registry.h"
#include "vcore/errors.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "vcore's compiled core: cluster state as struct-of-arrays and the fused scheduling kernels (private).";
  // Input the caller computed against state that changed since (nothing was written; the caller computes again).
  pybind11::register_exception<vcore::Stale>(m, "StaleError", PyExc_RuntimeError);
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vcore::NotFound& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const vcore::Invalid& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  vcore_bindings::register_cluster(m);
  vcore_bindings::register_engine(m);
  vcore_bindings::register_gpu(m);
  vcore_bindings::register_topology(m);
  vcore_bindings::register_routing(m);
  vcore_bindings::register_volumes(m);
  vcore_bindings::nogil_probe::register_probe(m);
}
