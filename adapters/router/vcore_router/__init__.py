"""vcore_router: the OpenAI-compatible inference router built on vcore's routing kernels.

Empty for now: the core issue only requires that the package installs.
"""
