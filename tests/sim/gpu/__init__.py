"""Tests of vcore.sim.gpu: the openb trace reader, the FGD replay protocol and its metrics, the live replay through
vcore.Scheduler, the held-out workload variants and ``vcore simulate --trace-dir``."""
