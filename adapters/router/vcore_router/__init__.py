"""vcore_router: the OpenAI-compatible inference router built on vcore's routing kernels.

Modules: ``server`` (aiohttp proxy), ``config`` (Kthena ModelRoute/ModelServer shape), ``scraper`` (engine
metrics), ``ratelimit`` (local and Redis token buckets), ``metrics`` (Prometheus, autoscaling signal),
``discovery`` (pods by label selector, watched with vcore_kube's reflector), ``engine_sim`` (OpenAI-compatible
engine simulator), ``demo``, ``cli``.
"""
