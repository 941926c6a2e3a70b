"""vcore_kube: the standalone Kubernetes scheduler process built on vcore (watch loop, binding, Volcano CRDs).

Empty for now: the core issue only requires that the package installs.
"""
