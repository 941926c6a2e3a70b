"""The physical floor of an aiohttp proxy, for the router overhead benchmark: every POST is forwarded as is to one
upstream over keep-alive connections and its answer returned, with no parsing, routing, limits or metrics.

    python bench/passthrough_proxy.py --port N --upstream http://127.0.0.1:M [--uvloop]
"""

from __future__ import annotations

import argparse

import aiohttp
from aiohttp import web


def make_app(upstream: str) -> web.Application:
    app = web.Application()

    async def start(app: web.Application) -> None:
        app["http"] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def stop(app: web.Application) -> None:
        await app["http"].close()

    async def forward(request: web.Request) -> web.Response:
        body = await request.read()
        async with app["http"].post(
            upstream + request.path, data=body, headers={"Content-Type": request.content_type}
        ) as resp:
            data = await resp.read()
            return web.Response(body=data, status=resp.status, content_type=resp.content_type)

    app.router.add_post("/{tail:.*}", forward)
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    return app


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--uvloop", action="store_true", help="run on uvloop (as vcore-router does when it is installed)")
    args = ap.parse_args()
    loop = None
    if args.uvloop:
        import uvloop

        loop = uvloop.new_event_loop()
    web.run_app(
        make_app(args.upstream.rstrip("/")), host="127.0.0.1", port=args.port, print=None, access_log=None, loop=loop
    )


if __name__ == "__main__":
    main()
