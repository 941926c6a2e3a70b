"""vcore_kube: vcore-scheduler, the standalone Kubernetes scheduler built on vcore.

Modules by layer, lowest first; a module imports only from its own layer and those below, and the imports form no
circle (tests/test_layering.py holds the same list and keeps it true):

values and connections
    config        the YAML configuration (unknown keys are errors)
    kubeclient    raw-JSON requests through the official client's configuration, auth and connection pool
    metrics       Prometheus metrics, /metrics /healthz /readyz
    inbox         what other threads hand the scheduling loop, with a lane for the fast path
    cache         the latest objects by kind and key, and the deltas between states
    convert       Kubernetes objects into vcore's cluster state (the one module that knows both)
    schedqueue    kube-scheduler's scheduling queue for the fast path (active, backoff, unschedulable, hints)
    pending       a pod being placed: the loop's record of it (state, backoff, binding in flight, last event)
    volumehints   the volume plugins' queueing hints: which storage event may help a pod they rejected
the API's objects
    reflector     list+watch of one resource per thread (relist on 410, bookmarks, backoff with jitter)
    nodeshard     Volcano's NodeShard reads and writes, and its watch
    binder        pods/binding with bounded concurrency (the volcano.sh/gpu-index annotation, evictions first)
    volumewriter  VolumeBinding's PreBind writes: PVs bound to their claims, claims marked for their node
    events        Scheduled / FailedScheduling / PodGroup events, the PodScheduled condition, evictions
    leader        leader election on a coordination.k8s.io Lease
    statuswriter  statuses written on change: coalesced per object, retried, never dropped (own threads)
decisions
    batchcycle    the batch's decision seam: vcore.Scheduler.run_cycle() (the gang API)
    fastpath      agent pods placed on arrival in micro-batches (the fast path's decision seam)
    warmpool      warm pools: placeholders kept out of vcore's state, hits, room, refill (their decision seam)
    membership    an instance's share of the nodes and its hand-over protocol
    shardplan     the sharding controller's configuration and assignment rule (numpy)
    volcanostatus  a cycle's PodGroup and Queue statuses in Volcano's shapes; equal as Volcano compares them
beside the loop
    agentcontrol  the fast path and warm pools in the scheduling loop: their events, micro-batches, refills
    shardcontrol  sharding in the scheduling loop: scopes applied to every scheduler, writes handed over
    shardwriter   an instance's NodeShard status writes (a thread of their own)
    statusreport  after a cycle: changed statuses to the status writer, Volcano's PodGroup events
the loop
    loop          the scheduling loop and its queue (backoff, unschedulable pods, assume/forget)
processes
    process       one scheduler process: wiring, graceful shutdown
    sharder       the sharding controller process (vcore-scheduler --role sharder)
the test control plane
    testenv       the real control plane for tests, the demo and benchmarks (no runtime part uses it)
commands
    cli, demo     the vcore-scheduler command and its --demo
"""
