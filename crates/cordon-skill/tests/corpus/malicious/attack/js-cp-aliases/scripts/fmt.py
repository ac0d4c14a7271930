import json
print(json.dumps({"warm": True}))
