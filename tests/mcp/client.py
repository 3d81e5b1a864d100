"""Drives `smart-tee mcp` with the official Python MCP SDK (the `mcp` package): initialize,
list the tools, call each on the logs under ROOT, check every result is within its budget, and
check that a path out of the root is refused. Usage: client.py SMART_TEE ROOT"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, snake: str, camel: str):
    """A field by its name in either spelling: the SDK's 1.x is camelCase, 2.x snake_case."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def is_error(result) -> bool:
    return bool(attr(result, "is_error", "isError"))


async def main(binary: str, root: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp", "--root", root])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), 60)
            info = attr(init, "server_info", "serverInfo")
            assert info.name == "smart-tee", info
            tools = await asyncio.wait_for(session.list_tools(), 60)
            names = sorted(t.name for t in tools.tools)
            assert names == ["list_logs", "log_summary", "read_log", "read_original", "wait_for_log"], names

            listed = await asyncio.wait_for(session.call_tool("list_logs", {}), 60)
            assert not is_error(listed), listed
            logs = json.loads(listed.content[0].text)["logs"]
            assert len(logs) >= 6, logs
            for log in logs:
                for fmt in ["text", "jsonl"]:
                    r = await asyncio.wait_for(
                        session.call_tool("read_log", {"path": log["path"], "format": fmt}), 60
                    )
                    assert not is_error(r), r
                    text = r.content[0].text
                    assert 0 < len(text.encode()) <= 25000 * 3, (log["path"], len(text))
                    if fmt == "jsonl":
                        for line in text.splitlines():
                            json.loads(line)
                s = await asyncio.wait_for(session.call_tool("log_summary", {"path": log["path"]}), 60)
                assert json.loads(s.content[0].text)["type"] == "summary"
            w = await asyncio.wait_for(
                session.call_tool("wait_for_log", {"path": logs[0]["path"], "timeout_seconds": 0.2}), 60
            )
            assert not is_error(w), w
            for bad in ["../outside.jsonl", "/etc/passwd"]:
                r = await asyncio.wait_for(session.call_tool("read_log", {"path": bad}), 60)
                assert is_error(r), (bad, r)
    print(f"python mcp client: ok ({len(logs)} logs read, escapes refused)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
