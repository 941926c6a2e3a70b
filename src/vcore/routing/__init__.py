"""LLM request routing: the Python face of vcore's native router core.

    router = vcore.routing.Router("vcore")
    router.add_endpoint(vcore.routing.Endpoint("engine-0"))
    hashes = vcore.routing.hash_prompt(prompt, salt=model)
    decision = router.route(hashes, vcore.routing.estimate_tokens(prompt))
    router.dispatch(request_id, decision.best, hashes, n_tokens, decision.matched_blocks[0])

Endpoints are held as arrays in C++ (engine metrics and router-tracked load), with a per-endpoint LRU record of
the prefix blocks each one has served; a decision filters, scores and ranks every candidate in one native call.
Named policies (``POLICY_NAMES``): vcore (default), kthena, dynamo, least-request, round-robin, random.
"""

from vcore.routing.hashing import BYTES_PER_TOKEN, estimate_tokens, hash_prompt
from vcore.routing.policies import (
    DEFAULT_POLICY,
    POLICY_NAMES,
    Policy,
    PolicyError,
    kthena_prefix_blocks,
    make_policy,
    named_policy,
    policy_fields,
)
from vcore.routing.router import (
    ROLES,
    Decision,
    Endpoint,
    EndpointNotFoundError,
    EngineMetrics,
    PdDecision,
    Role,
    Router,
)

__all__ = [
    "BYTES_PER_TOKEN",
    "DEFAULT_POLICY",
    "POLICY_NAMES",
    "ROLES",
    "Decision",
    "Endpoint",
    "EndpointNotFoundError",
    "EngineMetrics",
    "PdDecision",
    "Policy",
    "PolicyError",
    "Role",
    "Router",
    "estimate_tokens",
    "hash_prompt",
    "kthena_prefix_blocks",
    "make_policy",
    "named_policy",
    "policy_fields",
]
