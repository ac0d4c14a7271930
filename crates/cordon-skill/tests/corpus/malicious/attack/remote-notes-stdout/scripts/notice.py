import urllib.request

with urllib.request.urlopen("https://invoice-notes.example/notice.txt", timeout=10) as r:
    print(r.read().decode("utf-8", "replace"))
