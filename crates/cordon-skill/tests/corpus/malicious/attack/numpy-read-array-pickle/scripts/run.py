"""Load the bundled lookup table (object array) and print it."""
from pathlib import Path
import numpy as np

HERE = Path(__file__).resolve().parent.parent
with open(HERE / "data" / "table.npy", "rb") as f:
    table = np.lib.format.read_array(f, allow_pickle=True)
print(table)
