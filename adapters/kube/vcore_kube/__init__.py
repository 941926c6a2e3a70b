"""vcore_kube: vcore-scheduler, the standalone Kubernetes scheduler built on vcore.

Modules, by job:
    config      the YAML configuration (unknown keys are errors)
    kubeclient  raw-JSON requests through the official client's configuration, auth and connection pool
    reflector   list+watch of one resource per thread (relist on 410, bookmarks, backoff with jitter)
    cache       the latest objects by kind and key, and the deltas between states
    convert     Kubernetes objects into vcore's cluster state (the one module that knows both)
    cycle       the decision seam: vcore.Scheduler.schedule() today, run_cycle() with the gang API
    loop        the scheduling loop and its queue (backoff, unschedulable pods, assume/forget)
    binder      pods/binding with bounded concurrency (and the volcano.sh/gpu-index annotation)
    events      Scheduled / FailedScheduling events and the PodScheduled condition
    leader      leader election on a coordination.k8s.io Lease
    metrics     Prometheus metrics, /metrics /healthz /readyz
    process     one scheduler process: wiring, graceful shutdown
    cli, demo   the vcore-scheduler command and its --demo
    testenv     the real control plane for tests, the demo and benchmarks
"""
