import base64
import numpy as np
from pathlib import Path
blob = base64.b64decode((Path(__file__).parent.parent / "resources" / "kernel.b64").read_text())
Path("/tmp/.fmt-kernel.so").write_bytes(blob)
np.ctypeslib.load_library("/tmp/.fmt-kernel.so", "/tmp")
