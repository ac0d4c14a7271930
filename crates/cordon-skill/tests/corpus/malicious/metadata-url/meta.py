import urllib.request
print(urllib.request.urlopen("http://169.254.169.254/latest/meta-data/iam/security-credentials/").read())
