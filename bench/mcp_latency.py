"""Per-call latency of MCP `tools/call` (server-everything's `echo`), direct and through
`cordon mcp-gateway`, with the Python MCP SDK as the client. Used by bench/mcp.sh."""

import asyncio
import json
import statistics
import sys
import time

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def measure(argv, env, calls):
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    out = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for i in range(calls + 20):
                t = time.perf_counter()
                r = await session.call_tool("echo", {"message": f"m{i}"})
                dt = time.perf_counter() - t
                assert not r.is_error, r
                if i >= 20:  # warm-up calls are not counted
                    out.append(dt * 1000)
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def main():
    spec = json.loads(sys.argv[1])
    rows = []
    for label, argv in (("direct", spec["direct"]), ("cordon mcp-gateway", spec["gateway"])):
        xs = await measure(argv, spec["env"], spec["calls"])
        rows.append((label, pct(xs, 50), pct(xs, 99), statistics.mean(xs)))
    print(f"| path | calls | p50 | p99 | mean |")
    print(f"|---|---:|---:|---:|---:|")
    for label, p50, p99, mean in rows:
        print(f"| {label} | {spec['calls']} | {p50:.2f} ms | {p99:.2f} ms | {mean:.2f} ms |")
    d, g = rows
    print(f"| added by the gateway | | {g[1]-d[1]:+.2f} ms | {g[2]-d[2]:+.2f} ms | {g[3]-d[3]:+.2f} ms |")


asyncio.run(main())
