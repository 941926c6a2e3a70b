"""Build the compiled modules of vcore.

vcore._native._core    C++17 core (pybind11): cluster state and the fused scheduling kernels.
vcore._native._convert Cython: Kubernetes quantities and objects into the core's flat inputs.
vcore._native._records Cython: result records (placements) made in bulk.

C++ translation units are compiled in parallel (pybind11's ParallelCompile) to keep a clean build short.
"""

import glob
import os

import numpy
from Cython.Build import cythonize
from pybind11.setup_helpers import ParallelCompile, Pybind11Extension
from setuptools import Extension, setup

ParallelCompile("VCORE_BUILD_JOBS", default=os.cpu_count() or 2).install()

NATIVE = "src/vcore/_native"
# core/src/plugins/: one translation unit per node plugin, each registering itself (core/include/vcore/node_plugin.h).
core_sources = sorted(
    glob.glob(f"{NATIVE}/core/src/*.cpp")
    + glob.glob(f"{NATIVE}/core/src/plugins/*.cpp")
    + glob.glob(f"{NATIVE}/core/src/volumes/*.cpp")
    + glob.glob(f"{NATIVE}/core/src/routing/*.cpp")
    + glob.glob(f"{NATIVE}/bindings/*.cpp")
)

core = Pybind11Extension(
    "vcore._native._core",
    core_sources,
    include_dirs=[f"{NATIVE}/core/include"],
    cxx_std=17,
    # -ffp-contract=off: the vector kernels must round exactly like the scalar reference (no fused multiply-add).
    extra_compile_args=["-O3", "-fvisibility=hidden", "-ffp-contract=off", "-pthread"],
    extra_link_args=["-pthread"],
)

convert = Extension(
    "vcore._native._convert",
    [f"{NATIVE}/_convert.pyx"],
    include_dirs=[numpy.get_include()],
    extra_compile_args=["-O2"],
)

records = Extension("vcore._native._records", [f"{NATIVE}/_records.pyx"], extra_compile_args=["-O2"])

setup(
    ext_modules=[core, *cythonize([convert, records], language_level=3, compiler_directives={"boundscheck": False})],
)
