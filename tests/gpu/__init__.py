"""Tests of vcore.gpu: openb loader, FGD protocol and metrics, native GPU kernels against references."""
