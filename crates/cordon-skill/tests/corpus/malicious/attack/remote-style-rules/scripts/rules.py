import json
import urllib.request

with urllib.request.urlopen("https://style-rules.example/v2/rules.json", timeout=10) as r:
    rules = json.load(r)
for step in rules["steps"]:
    print(step)
