"""Pure-Python references of the native GPU kernels (fragment, FGD score, replay) used by the tests."""

from __future__ import annotations

import math

MILLI = 1000


def allowed(node_model: int, mask: int) -> bool:
    return mask == 0 or (node_model >= 0 and (mask >> node_model) & 1 == 1)


def node_fragment(cpu_free: int, node_model: int, frees: list[int], specs: list[tuple]) -> float:
    """F_n = sum_m p_m F_n(m); specs are (cpu, gpu_milli, num_gpu, mask, weight)."""
    total = sum(frees)
    if total == 0:
        return 0.0
    f = 0.0
    for cpu, milli, num, mask, w in specs:
        frag = total
        if milli > 0 and num > 0 and cpu_free >= cpu and allowed(node_model, mask):
            ok = sum(1 for x in frees if x >= milli)
            if ok >= num:
                frag = sum(x for x in frees if x < milli)
        f += w * float(frag)
    return f


def fits(node: dict, pod: tuple) -> bool:
    cpu, mem, num, milli, mask = pod
    if node["cpu"] < cpu or node["mem"] < mem:
        return False
    if num == 0 or milli == 0:
        return True
    if not allowed(node["model"], mask):
        return False
    if num == 1 and milli < MILLI:
        return any(x >= milli for x in node["frees"])
    return sum(1 for x in node["frees"] if x == MILLI) >= num


def _whole(frees: list[int], num: int) -> list[int]:
    out = []
    for i, x in enumerate(frees):
        if len(out) == num:
            break
        if x == MILLI:
            out.append(i)
    return out


def sigmoid_score(fb: float, fa: float) -> int:
    return int(1.0 / (1.0 + math.exp(-((fb - fa) / 1000.0))) * 100.0)


def fgd_score(node: dict, pod: tuple, specs: list[tuple]) -> tuple[int, list[int]]:
    """FGD score of a feasible node and the GPUs taken."""
    cpu, _mem, num, milli, _mask = pod
    fb = node_fragment(node["cpu"], node["model"], node["frees"], specs)
    if num == 1 and 0 < milli < MILLI:
        best, gpu = None, None
        for i, x in enumerate(node["frees"]):
            if x < milli:
                continue
            after = list(node["frees"])
            after[i] -= milli
            s = sigmoid_score(fb, node_fragment(node["cpu"] - cpu, node["model"], after, specs))
            if best is None or s > best:
                best, gpu = s, i
        return best, [gpu]
    gpus = _whole(node["frees"], num) if (num and milli) else []
    after = [0 if i in gpus else x for i, x in enumerate(node["frees"])]
    return sigmoid_score(fb, node_fragment(node["cpu"] - cpu, node["model"], after, specs)), gpus


def best_fit_score(node: dict, pod: tuple) -> tuple[int, list[int]]:
    cpu, _mem, num, milli, _mask = pod
    s = 0.0
    s += (float(node["cpu"]) - float(cpu)) / 128000.0 * 0.5
    s += (float(sum(node["frees"])) - float(num * milli)) / 8000.0 * 0.5
    if num == 1 and 0 < milli < MILLI:
        cands = [i for i, x in enumerate(node["frees"]) if x >= milli]
        gpus = [min(cands, key=lambda i: (node["frees"][i], i))]
    else:
        gpus = _whole(node["frees"], num) if (num and milli) else []
    return int((1.0 - s) * 100.0), gpus


def replay(nodes: list[dict], pods: list[tuple], order: list[int], specs: list[tuple], policy: str) -> list[int]:
    """Reference one-pass replay for first-fit, best-fit and fgd; returns the node of each pod (-1 dropped)."""
    nodes = [dict(n, frees=list(n["frees"])) for n in nodes]
    out = []
    for pod in pods:
        best, best_s, best_g = -1, None, None
        for n in order:
            node = nodes[n]
            if not fits(node, pod):
                continue
            if policy == "fgd":
                s, g = fgd_score(node, pod, specs)
            elif policy == "best-fit":
                s, g = best_fit_score(node, pod)
            else:
                cpu, _m, num, milli, _k = pod
                s = 0
                if num == 1 and 0 < milli < MILLI:
                    g = [next(i for i, x in enumerate(node["frees"]) if x >= milli)]
                else:
                    g = _whole(node["frees"], num) if (num and milli) else []
            if best_s is None or s > best_s:
                best, best_s, best_g = n, s, g
        if best >= 0:
            cpu, mem, num, milli, _mask = pod
            node = nodes[best]
            node["cpu"] -= cpu
            node["mem"] -= mem
            take = milli if (num == 1 and milli < MILLI) else MILLI
            if num and milli:
                for i in best_g:
                    node["frees"][i] -= take
        out.append(best)
    return out
