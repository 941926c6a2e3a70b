"""Simulation: models of the systems vcore schedules for, used by replays, benchmarks and test peers.

``vcore.sim.llm``: the LLM inference engine model (latency and KV cache) shared by the discrete-event trace
replay of the router and the HTTP engine simulator.
"""
