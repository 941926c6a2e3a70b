// One register_<area> function per binding file; module.cpp calls each once.
#pragma once
#include <pybind11/pybind11.h>

namespace vcore_bindings {
void register_cluster(pybind11::module_& m);
void register_engine(pybind11::module_& m);
void register_gpu(pybind11::module_& m);
void register_topology(pybind11::module_& m);
void register_routing(pybind11::module_& m);
void register_volumes(pybind11::module_& m);
}  // namespace vcore_bindings
