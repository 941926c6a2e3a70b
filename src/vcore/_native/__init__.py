"""vcore's private compiled modules: _core (C++17, pybind11) and _convert (Cython). Imports nothing from vcore."""
