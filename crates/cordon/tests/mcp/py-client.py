"""A real MCP client (the Python `mcp` SDK) driven by a JSON script, for cordon's tests.

Usage: py-client.py SPEC_JSON, SPEC as for ts-client.js. Prints {"steps", "logs",
"progress", "sampled", "elicited", "notifications"}, every result as the SDK parsed it.
"""

import asyncio
import json
import sys

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def dump(x):
    return x.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(x, "model_dump") else x


async def main(spec):
    out = {"steps": [], "logs": [], "progress": [], "sampled": [], "elicited": [], "notifications": []}

    async def on_sample(context, params):
        out["sampled"].append(dump(params))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="sampled"), model="m")

    async def on_elicit(context, params):
        out["elicited"].append(dump(params))
        return types.ElicitResult(action="decline")

    async def on_log(params):
        out["logs"].append(dump(params))

    async def on_message(message):
        if not isinstance(message, Exception):
            out["notifications"].append(dump(message))

    async def on_progress(progress, total, message):
        out["progress"].append({"progress": progress, "total": total, "message": message})

    params = StdioServerParameters(command=spec["command"][0], args=spec["command"][1:], env=spec.get("env") or None)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, sampling_callback=on_sample, elicitation_callback=on_elicit,
                                 logging_callback=on_log, message_handler=on_message) as session:
            init = await session.initialize()
            out["initialize"] = dump(init)
            for s in spec["steps"]:
                try:
                    if s.get("call"):
                        r = await session.call_tool(s["call"], s.get("args") or {}, read_timeout_seconds=20,
                                                    progress_callback=on_progress)
                    elif s.get("list") == "tools":
                        r = await session.list_tools()
                    elif s.get("list") == "resources":
                        r = await session.list_resources()
                    elif s.get("list") == "prompts":
                        r = await session.list_prompts()
                    elif s.get("read"):
                        r = await session.read_resource(s["read"])
                    elif s.get("prompt"):
                        r = await session.get_prompt(s["prompt"], {"a": "x"})
                    else:
                        r = await session.complete(types.PromptReference(type="ref/prompt", name="p"), {"name": "a", "value": "x"})
                    out["steps"].append(dump(r))
                except Exception as e:  # a JSON-RPC error from the other end
                    out["steps"].append({"error": str(e)})
    print(json.dumps(out))


asyncio.run(main(json.loads(sys.argv[1])))
