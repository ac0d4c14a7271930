"""Per-call latency of MCP `tools/call` (server-everything's `echo`), direct and through
`cordon mcp-gateway` builds, with the Python MCP SDK as the client. Used by bench/mcp.sh.

The spec names the paths ([label, argv]); each is measured in `rounds` rounds of
calls/rounds calls (20 warm-up calls of each run not counted), every path once per round."""

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
    rounds = max(1, spec.get("rounds", 1))
    per_round = max(1, spec["calls"] // rounds)
    samples = {label: [] for label, _ in spec["paths"]}
    for _ in range(rounds):
        for label, argv in spec["paths"]:
            samples[label].extend(await measure(argv, spec["env"], per_round))
    print("| path | calls | p50 | p99 | mean | p50 added to direct |")
    print("|---|---:|---:|---:|---:|---:|")
    direct = pct(samples[spec["paths"][0][0]], 50)
    for label, _ in spec["paths"]:
        xs = samples[label]
        added = "" if label == spec["paths"][0][0] else f"{pct(xs, 50) - direct:+.3f} ms"
        print(f"| {label} | {len(xs)} | {pct(xs, 50):.3f} ms | {pct(xs, 99):.3f} ms | {statistics.mean(xs):.3f} ms | {added} |")


asyncio.run(main())
