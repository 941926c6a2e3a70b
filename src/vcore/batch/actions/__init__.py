"""The cycle's actions, run in the configured order over one Session (Volcano's actions of the same names)."""

from vcore.batch import config as C
from vcore.batch.actions.allocate import allocate, backfill
from vcore.batch.actions.enqueue import enqueue
from vcore.batch.actions.evict import preempt, reclaim

ACTIONS = {C.ENQUEUE: enqueue, C.ALLOCATE: allocate, C.BACKFILL: backfill, C.PREEMPT: preempt, C.RECLAIM: reclaim}
