"""The exceptions vcore raises at its public boundary.

Every error names the object and the field it is about. Each class also derives from the built-in exception a
Python user would expect (ValueError, KeyError), so callers can catch either.
"""


class VCoreError(Exception):
    """Base class of every vcore-specific error."""


class ProfileError(VCoreError, ValueError):
    """A scheduler profile is malformed: unknown plugin, unknown argument key, out-of-range value."""


class ProfileWarning(UserWarning):
    """A configuration value the scheduler it follows replaces by its default (Volcano logs a warning and goes on):
    the configuration loads, with the default in place; the warning names the field."""


class NodeExistsError(VCoreError, ValueError):
    """add_node was given a name the cluster already has."""


class NodeNotFoundError(VCoreError, KeyError):
    """A node name the cluster does not have."""


class NodeInUseError(VCoreError, ValueError):
    """remove_node on a node that still has bound pods, without evict=True."""


class PodAlreadyBoundError(VCoreError, ValueError):
    """bind (or schedule) of a pod whose namespace/name is already bound to a node."""


class PodNotFoundError(VCoreError, KeyError):
    """unbind of a pod the cluster does not hold."""


class PodExistsError(VCoreError, ValueError):
    """add_pod was given a namespace/name the cluster already has."""


class PodGroupExistsError(VCoreError, ValueError):
    """add_podgroup was given a namespace/name the cluster already has."""


class PodGroupNotFoundError(VCoreError, KeyError):
    """A PodGroup namespace/name the cluster does not have."""


class QueueExistsError(VCoreError, ValueError):
    """A queue added under a name the queue tree already holds."""


class QueueNotFoundError(VCoreError, KeyError):
    """A queue name the queue tree does not hold (update, remove, or a parent that does not exist)."""


class QueueInUseError(VCoreError, ValueError):
    """remove of a queue that still has child queues or jobs, or of a queue Volcano never deletes."""


class TopologyError(VCoreError, ValueError):
    """A HyperNode, a topology level list or a topology constraint is invalid (cycle, overlap, unknown tier...)."""


class HyperNodeNotFoundError(VCoreError, KeyError):
    """update_hypernode / remove_hypernode of a HyperNode the cluster does not have."""


class ObjectExistsError(VCoreError, ValueError):
    """An object of another kind the cluster holds (a Service, a PersistentVolume, ...) is added twice."""


class ObjectNotFoundError(VCoreError, KeyError):
    """An object of another kind the cluster holds is updated or removed but was never added."""
