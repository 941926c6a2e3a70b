"""vcore_kube: vcore-scheduler, the standalone Kubernetes scheduler built on vcore.

Modules, by job:
    config      the YAML configuration (unknown keys are errors)
    kubeclient  raw-JSON requests through the official client's configuration, auth and connection pool
    reflector   list+watch of one resource per thread (relist on 410, bookmarks, backoff with jitter)
    cache       the latest objects by kind and key, and the deltas between states
    convert     Kubernetes objects into vcore's cluster state (the one module that knows both)
    batchcycle  the batch's decision seam: vcore.Scheduler.run_cycle() (the gang API)
    pending     a pod being placed: the loop's record of it (state, backoff, binding in flight, last event)
    loop        the scheduling loop and its queue (backoff, unschedulable pods, assume/forget)
    fastpath    agent pods placed on arrival in micro-batches (the fast path's decision seam)
    schedqueue  kube-scheduler's scheduling queue for the fast path (active, backoff, unschedulable, hints)
    warmpool    warm pools: placeholders kept out of vcore's state, hits, room, refill (their decision seam)
    agentcontrol  the fast path and warm pools in the scheduling loop: its events, micro-batches, refills
    shardplan   the sharding controller's configuration and assignment rule (numpy)
    sharder     the sharding controller process (vcore-scheduler --role sharder)
    nodeshard   Volcano's NodeShard reads and writes
    membership  an instance's share of the nodes and its hand-over protocol
    shardwriter an instance's NodeShard status writes (a thread of their own)
    shardcontrol  sharding in the scheduling loop: scopes applied to every scheduler, writes handed over
    binder      pods/binding with bounded concurrency (and the volcano.sh/gpu-index annotation, evictions first)
    events      Scheduled / FailedScheduling events and the PodScheduled condition
    leader      leader election on a coordination.k8s.io Lease
    metrics     Prometheus metrics, /metrics /healthz /readyz
    process     one scheduler process: wiring, graceful shutdown
    cli, demo   the vcore-scheduler command and its --demo
    testenv     the real control plane for tests, the demo and benchmarks
"""
