"""The names of the queue-share plugins, as they appear in a volcano-scheduler.conf tier (one place for all)."""

PROPORTION = "proportion"  # Volcano's proportion: weight water-filling
CAPACITY = "capacity"  # Volcano's capacity: per-resource deserved, optional hierarchy
HIERARCHY = "hierarchy"  # KAI Scheduler's hierarchical quota / limit / overQuotaWeight fair share
COHORT = "cohort"  # Kueue's ClusterQueue cohorts: nominal quota, borrowing and lending limits
