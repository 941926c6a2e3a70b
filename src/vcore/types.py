"""The value types shared across vcore's layers: what a scheduling decision returns.

Below every other vcore module (it imports nothing from vcore but the errors): the scheduler, the cycle and the
adapters all speak these types, so none of them has to import another for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # its own module for now; an annotation only
    from vcore.gpu.fit import GpuChoice


class Placement(NamedTuple):
    """Where one pod went: a node name, or None with the reason summary.

    ``gpus`` are the node-local GPU devices a GPU pod took (``gpus.gpu_index_annotation()`` gives the value of
    a ``volcano.sh/gpu-index`` annotation); None for pods without a GPU request or not placed.
    """

    pod: str
    node: str | None
    reasons: dict[str, int]
    message: str
    gpus: GpuChoice | None = None
