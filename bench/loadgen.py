"""Open-loop HTTP load generator for the router overhead benchmark, run in its own process so that it never
shares an interpreter (or its GIL) with what it measures.

    python bench/loadgen.py --url http://127.0.0.1:N/v1/completions --model m --rate 500 --n 2000 --warmup 200

Request i is sent at start + i / rate whatever happened to the earlier ones (a slow answer does not slow the
offered load), over a keep-alive connection pool. Prints one JSON object: the latencies in seconds of the n
measured requests (the warm-up ones are sent first and not kept), and the count of non-200 answers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import aiohttp


async def generate(url: str, body: bytes, rate: float, n: int, warmup: int) -> dict:
    latencies: list[float] = []
    errors = 0
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), cookie_jar=aiohttp.DummyCookieJar()
    ) as session:

        async def one(keep: bool) -> None:
            nonlocal errors
            t0 = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as resp:
                await resp.read()
                errors += resp.status != 200
            if keep:
                latencies.append(time.perf_counter() - t0)

        tasks = []
        start = time.perf_counter()
        for i in range(warmup + n):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i >= warmup)))
        await asyncio.gather(*tasks)
    return {"latencies_s": latencies, "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--rate", type=float, default=500.0, help="requests per second")
    ap.add_argument("--n", type=int, default=2000, help="measured requests")
    ap.add_argument("--warmup", type=int, default=200, help="requests sent first and not measured")
    args = ap.parse_args()
    body = json.dumps({"model": args.model, "prompt": "hello " * 50, "max_tokens": 1}).encode()
    try:
        import uvloop  # the generator's own overhead is smaller on uvloop; it is the same for every target

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:
        runner = asyncio.Runner()
    with runner:
        print(json.dumps(runner.run(generate(args.url, body, args.rate, args.n, args.warmup))))


if __name__ == "__main__":
    main()
