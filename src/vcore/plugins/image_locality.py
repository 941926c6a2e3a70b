"""ImageLocality: prefer nodes that already have the pod's container images, weighted by image size and by how
widely the image is spread (score). No arguments; its kernel is the native node plugin
core/src/plugins/image_locality.cpp over the nodes' ``status.images``."""

from vcore.plugins.base import SCORE, NodePlugin

PLUGIN = NodePlugin("ImageLocality", frozenset({SCORE}), native_args=lambda args: {})
