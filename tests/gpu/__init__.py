"""Tests of vcore.gpu: the device model (devices, requests, MIG, NUMA), the native device fit and GPU kernels
against pure-Python references."""
