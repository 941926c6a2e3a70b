"""vcore_router: the OpenAI-compatible inference router built on vcore's routing kernels.

Modules by layer, lowest first; a module imports only from its own layer and those below, and the imports form no
circle (tests/test_layering.py holds the same list and keeps it true):

values and parsing
    config      the router's configuration, in Kthena's ModelRoute/ModelServer shape
    request     a client's OpenAI request body, read and checked
    metrics     the router's Prometheus metrics and the autoscaling signal
    ratelimit   per-model token buckets, local or shared through Redis
    scraper     engines' Prometheus metrics (vLLM, SGLang names) into the routing core
endpoints
    health      what a request's end or a scrape says about an engine's health
    discovery   endpoints from the pods of a label selector, watched with vcore_kube's reflector
servers
    server      the aiohttp proxy: routing, streaming, retries, PD disaggregation, rate limits
    engine_sim  an OpenAI-compatible engine simulator (vcore's engine model behind HTTP)
commands
    demo, cli   the vcore-router command (the router, trace replay and generation) and its --demo
"""
