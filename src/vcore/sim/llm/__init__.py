"""LLM serving simulation: the engine latency and KV-cache model, Mooncake-format traces, the router replay.

``SimulatedEngine`` (engine.py) is the one model both the discrete-event ``replay`` and the HTTP engine simulator
(``vcore_router.engine_sim``) run; ``EngineParams`` presets (params.py) derive its constants from a model and a
GPU with their sources.
"""

from vcore.sim.llm.engine import FINISHED, FIRST_TOKEN, EngineEvent, SimRequest, SimulatedEngine
from vcore.sim.llm.kvcache import KVCache
from vcore.sim.llm.params import (
    DEFAULT_PRESET,
    LLAMA2_70B_A800X8,
    LLAMA3_8B_A100,
    LLAMA3_70B_H100X8,
    PRESETS,
    TRACE_PRESET,
    EngineParams,
)
from vcore.sim.llm.replay import ReplayResult, format_table, prompt_load, replay, ttft_lower_bound
from vcore.sim.llm.trace import (
    TRACE_BLOCK_TOKENS,
    TraceRequest,
    load_trace,
    parse_trace,
    synthetic_trace,
    write_trace,
)

__all__ = [
    "DEFAULT_PRESET",
    "FINISHED",
    "FIRST_TOKEN",
    "LLAMA2_70B_A800X8",
    "LLAMA3_70B_H100X8",
    "LLAMA3_8B_A100",
    "PRESETS",
    "TRACE_BLOCK_TOKENS",
    "TRACE_PRESET",
    "EngineEvent",
    "EngineParams",
    "KVCache",
    "ReplayResult",
    "SimRequest",
    "SimulatedEngine",
    "TraceRequest",
    "format_table",
    "load_trace",
    "parse_trace",
    "prompt_load",
    "replay",
    "synthetic_trace",
    "ttft_lower_bound",
    "write_trace",
]
