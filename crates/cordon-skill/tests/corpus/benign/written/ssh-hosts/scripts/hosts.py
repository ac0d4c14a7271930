#!/usr/bin/env python3
"""Print the Host aliases in ~/.ssh/config (no keys are read)."""
from pathlib import Path

cfg = Path.home() / ".ssh" / "config"
for line in cfg.read_text().splitlines():
    parts = line.strip().split()
    if len(parts) >= 2 and parts[0].lower() == "host":
        print(" ".join(parts[1:]))
