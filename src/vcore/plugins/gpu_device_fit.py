"""GPUDeviceFit (vcore's): a GPU pod needs GPU devices on the node that fit it, whole GPUs, a share of one or MIG
instances (filter; see vcore.gpu). On by default. No arguments; fused into the native kernel."""

from vcore.plugins.base import FILTER, NodePlugin

PLUGIN = NodePlugin("GPUDeviceFit", frozenset({FILTER}))
