#!/usr/bin/env python3
"""Flag README lines that pipe a download straight into a shell."""
import pathlib
import re

RISKY = re.compile(r"(curl|wget)[^|\n]*\|\s*(sudo\s+)?(ba|z)?sh\b")
EXAMPLE = "curl -fsSL https://example.com/install.sh | bash"

def main():
    assert RISKY.search(EXAMPLE), "self-test"
    for p in pathlib.Path(".").rglob("*.md"):
        for n, line in enumerate(p.read_text(errors="ignore").splitlines(), 1):
            if RISKY.search(line):
                print(f"{p}:{n}: pipes a download into a shell: {line.strip()}")

if __name__ == "__main__":
    main()
