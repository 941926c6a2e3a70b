"""Tests of vcore.topology: the HyperNode / label-level tree, constraints, the native search, CP-SAT."""
