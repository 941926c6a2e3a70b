"""Simulation: synthetic workloads, scenarios and trace replays that drive the scheduler."""
