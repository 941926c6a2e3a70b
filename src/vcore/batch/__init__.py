"""Batch scheduling: PodGroups, queues, the scheduling cycle and its actions, and the queue-share plugins."""
